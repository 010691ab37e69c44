//! Conformance tests on the sans-I/O connection: two endpoints joined by a scripted wire.

use super::*;
use crate::engine::Rng;
use crate::tcp::config::RcvWindowRule;
use crate::tcp::rtt::{Backoff, RtoPolicy};
use crate::units::SimDuration;

const MS: SimDuration = SimDuration::from_millis(1);

/// A segment on the wire.
#[derive(Clone, Copy, Debug)]
struct InFlight {
    at: SimTime,
    order: u64,
    to_b: bool,
    seg: TcpHeader,
}

/// What the wire did with a segment (for assertions).
#[derive(Clone, Copy, Debug)]
struct Sent {
    at: SimTime,
    a_to_b: bool,
    seg: TcpHeader,
}

type DropFn = Box<dyn FnMut(&Sent, u64) -> bool>;

/// Two connections joined by a wire with a fixed one-way delay and a serialization rate; a
/// drop function decides per segment (given its index among a→b data segments).
struct Wire {
    now: SimTime,
    a: Connection,
    b: Connection,
    delay: SimDuration,
    /// Serialization time per byte (0 = infinitely fast).
    ps_per_byte: u64,
    a_busy_until: SimTime,
    queue: Vec<InFlight>,
    order: u64,
    log: Vec<Sent>,
    data_index: u64,
    drop: DropFn,
    /// Decides per a→b segment without payload (SYN, pure ACK, bare FIN, probe).
    drop_bare: Box<dyn FnMut(&Sent) -> bool>,
    /// Decides per a→b data segment that is delivered whether a queue marks it CE (given
    /// its index among a→b data segments); only an ECN-capable one is marked.
    mark: DropFn,
    timer_fires: Vec<(SimTime, bool)>,
    out: Output,
    events: Vec<(SimTime, bool, TcpEvent)>,
}

impl Wire {
    fn new(ca: TcpConfig, cb: TcpConfig, delay: SimDuration) -> Self {
        Wire {
            now: SimTime::ZERO,
            a: Connection::new(ca),
            b: Connection::new(cb),
            delay,
            ps_per_byte: 0,
            a_busy_until: SimTime::ZERO,
            queue: vec![],
            order: 0,
            log: vec![],
            data_index: 0,
            drop: Box::new(|_, _| false),
            drop_bare: Box::new(|_| false),
            mark: Box::new(|_, _| false),
            timer_fires: vec![],
            out: Output::default(),
            events: vec![],
        }
    }

    fn emit(&mut self, from_a: bool) {
        let segs: Vec<TcpHeader> = self.out.segments.drain(..).collect();
        for e in self.out.events.drain(..) {
            self.events.push((self.now, from_a, e));
        }
        for seg in segs {
            let sent = Sent { at: self.now, a_to_b: from_a, seg };
            self.log.push(sent);
            let mut dropped = false;
            let mut seg = seg;
            if from_a && seg.len > 0 {
                dropped = (self.drop)(&sent, self.data_index);
                if !dropped && seg.ecn.capable() && (self.mark)(&sent, self.data_index) {
                    seg.ecn = crate::net::packet::Ecn::Ce;
                }
                self.data_index += 1;
            } else if from_a {
                dropped = (self.drop_bare)(&sent);
            }
            if dropped {
                continue;
            }
            let mut at = self.now;
            if from_a && self.ps_per_byte > 0 {
                let start = self.a_busy_until.max(self.now);
                self.a_busy_until = start + SimDuration(seg.ip_len() as u64 * self.ps_per_byte);
                at = self.a_busy_until;
            }
            self.order += 1;
            self.queue.push(InFlight { at: at + self.delay, order: self.order, to_b: from_a, seg });
        }
    }

    fn open(&mut self) {
        self.b.listen();
        self.a.connect(self.now, &mut self.out);
        self.emit(true);
    }

    fn write(&mut self, bytes: u64) -> u64 {
        let n = self.a.write(self.now, bytes, &mut self.out);
        self.emit(true);
        n
    }

    /// Advance to the next event; false when nothing is pending.
    fn step(&mut self) -> bool {
        let next_pkt = self.queue.iter().map(|p| (p.at, p.order)).min();
        let ta = self.a.next_deadline();
        let tb = self.b.next_deadline();
        let mut best: Option<(SimTime, u8)> = next_pkt.map(|(t, _)| (t, 0));
        for (t, k) in [(ta, 1u8), (tb, 2u8)] {
            if let Some(t) = t {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, k));
                }
            }
        }
        let Some((t, k)) = best else { return false };
        assert!(t >= self.now, "time went backwards");
        self.now = t;
        match k {
            0 => {
                let (i, _) = self.queue.iter().enumerate().min_by_key(|(_, p)| (p.at, p.order)).unwrap();
                let p = self.queue.remove(i);
                if p.to_b {
                    self.b.on_segment(self.now, &p.seg, &mut self.out);
                    self.emit(false);
                } else {
                    self.a.on_segment(self.now, &p.seg, &mut self.out);
                    self.emit(true);
                }
            }
            1 => {
                self.timer_fires.push((t, true));
                self.a.on_timer(self.now, &mut self.out);
                self.emit(true);
            }
            _ => {
                self.timer_fires.push((t, false));
                self.b.on_timer(self.now, &mut self.out);
                self.emit(false);
            }
        }
        true
    }

    fn run_until(&mut self, t: SimTime) {
        while self.peek().is_some_and(|n| n <= t) {
            self.step();
        }
    }

    fn run_until_idle(&mut self, limit: usize) {
        for _ in 0..limit {
            if !self.step() {
                return;
            }
        }
        panic!("did not go idle");
    }

    fn peek(&self) -> Option<SimTime> {
        let mut v: Vec<SimTime> = self.queue.iter().map(|p| p.at).collect();
        v.extend(self.a.next_deadline());
        v.extend(self.b.next_deadline());
        v.into_iter().min()
    }

    fn data_from_a(&self) -> impl Iterator<Item = &Sent> {
        self.log.iter().filter(|s| s.a_to_b && s.seg.len > 0)
    }

    fn acks_from_b(&self) -> impl Iterator<Item = &Sent> {
        self.log.iter().filter(|s| !s.a_to_b && s.seg.len == 0 && !s.seg.has(flags::SYN))
    }

    /// The window b offered in its SYN-ACK.
    fn syn_ack_window(&self) -> u64 {
        self.log.iter().find(|s| !s.a_to_b && s.seg.has(flags::SYN)).expect("a SYN-ACK").seg.window
    }

    /// b's pure ACKs of data up to `last_ack` (the FIN's ACK excluded): (ack, window).
    fn data_acks(&self, last_ack: u64) -> Vec<(u64, u64)> {
        self.acks_from_b().filter(|s| s.seg.ack > 1 && s.seg.ack <= last_ack).map(|s| (s.seg.ack, s.seg.window)).collect()
    }

    /// The ACK numbers of b's first `n` ACKs of data.
    fn first_acks(&self, n: usize) -> Vec<u64> {
        self.acks_from_b().filter(|s| s.seg.ack > 1).take(n).map(|s| s.seg.ack).collect()
    }
}

/// Bytes acknowledged by each ACK of `acks` beyond the one before.
fn ack_steps(acks: &[(u64, u64)]) -> Vec<u64> {
    acks.windows(2).map(|p| p[1].0 - p[0].0).collect()
}

fn cfg() -> TcpConfig {
    TcpConfig { mss: 1000, delack_segments: 1, sndbuf: 1 << 30, rcvbuf: 1 << 30, ..TcpConfig::default() }
}

fn no_sack() -> TcpConfig {
    TcpConfig { sack: false, ..cfg() }
}

/// Transfer `bytes` from a to b, then close, and run until idle.
fn transfer(w: &mut Wire, bytes: u64) {
    w.open();
    assert_eq!(w.write(bytes), bytes);
    w.a.close(w.now, &mut w.out);
    w.emit(true);
    w.run_until_idle(1_000_000);
}

#[test]
fn handshake_negotiates_options() {
    let ca = TcpConfig { timestamps: true, ..cfg() };
    let cb = TcpConfig { timestamps: true, mss: 800, ..cfg() };
    let mut w = Wire::new(ca, cb, 10 * MS);
    w.open();
    let syn = w.log[0].seg;
    assert!(syn.has(flags::SYN) && !syn.has(flags::ACK));
    assert_eq!((syn.mss, syn.sack_permitted, syn.wscale.is_some()), (Some(1000), true, true));
    w.run_until(SimTime(20 * MS.as_ps()));
    let synack = w.log[1].seg;
    assert!(synack.has(flags::SYN | flags::ACK) && synack.ack == 1);
    assert_eq!(w.a.state(), State::Established);
    w.run_until(SimTime(30 * MS.as_ps()));
    assert_eq!(w.b.state(), State::Established);
    assert!(w.a.sack_negotiated() && w.b.sack_negotiated());
    // MSS is the smaller of the two, less the 12 bytes of timestamps.
    assert_eq!(w.a.smss(), 788);
    assert_eq!(w.b.smss(), 788);
    // The SYN gave an RTT sample of 20 ms.
    assert_eq!(w.a.srtt(), Some(20 * MS));
}

#[test]
fn transfer_completes_and_closes() {
    let mut w = Wire::new(cfg(), cfg(), 5 * MS);
    w.b.set_auto_read(true);
    transfer(&mut w, 100_000);
    assert_eq!(w.b.stats.bytes_delivered, 100_000);
    assert!(w.a.send_done());
    assert!(w.b.peer_closed());
    assert_eq!(w.a.stats.retransmits, 0);
    assert_eq!(w.a.stats.segments_sent, 100);
    assert!(matches!(w.a.state(), State::FinWait2 | State::TimeWait));
}

#[test]
fn slow_start_doubles_per_rtt_with_per_segment_acks() {
    let mut w = Wire::new(cfg(), cfg(), 50 * MS);
    w.open();
    w.write(10_000_000);
    // Handshake takes one RTT (100 ms); then each RTT the window doubles from IW = 4.
    let mut per_rtt = vec![];
    for k in 1..=5u64 {
        let lo = SimTime((100 * k) * MS.as_ps());
        let hi = SimTime((100 * (k + 1)) * MS.as_ps());
        w.run_until(SimTime(hi.0 - 1));
        per_rtt.push(w.data_from_a().filter(|s| s.at >= lo && s.at < hi).count());
    }
    assert_eq!(per_rtt, vec![4, 8, 16, 32, 64]);
}

#[test]
fn three_dupacks_trigger_fast_retransmit() {
    let mut w = Wire::new(no_sack(), no_sack(), 10 * MS);
    w.drop = Box::new(|_, i| i == 20);
    transfer(&mut w, 200_000);
    assert_eq!(w.b.stats.bytes_delivered, 200_000);
    assert_eq!(w.a.stats.fast_retransmits, 1);
    assert_eq!(w.a.stats.timeouts, 0);
    assert_eq!(w.a.stats.retransmits, 1);
    assert!(w.a.stats.dupacks_received >= 3);
    // The retransmission went out right after the third duplicate ACK arrived.
    let dup3 = w.events.iter().filter(|(_, a, e)| *a && e.kind == TcpEventKind::DupAck).nth(2).unwrap().0;
    let fr = w.events.iter().find(|(_, a, e)| *a && e.kind == TcpEventKind::FastRetransmit).unwrap().0;
    assert_eq!(dup3, fr);
    let lost_seq = w.data_from_a().nth(20).unwrap().seg.seq;
    let rtx = w.data_from_a().find(|s| s.seg.retransmit).unwrap();
    assert_eq!((rtx.at, rtx.seg.seq), (fr, lost_seq));
}

#[test]
fn limited_transmit_sends_on_first_two_dupacks() {
    for lt in [true, false] {
        let c = TcpConfig { limited_transmit: lt, ..no_sack() };
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        w.ps_per_byte = 80_000; // 100 Mb/s: ACKs come back spaced, one at a time
        w.drop = Box::new(|_, i| i == 30);
        transfer(&mut w, 100_000);
        assert_eq!(w.b.stats.bytes_delivered, 100_000);
        let dups: Vec<SimTime> = w.events.iter().filter(|(_, a, e)| *a && e.kind == TcpEventKind::DupAck).map(|e| e.0).take(3).collect();
        // New data sent at the instant of each of the first two duplicate ACKs (RFC 3042).
        let highest_before = |t: SimTime| w.data_from_a().filter(|s| s.at < t).map(|s| s.seg.seq).max().unwrap();
        for (k, &t) in dups.iter().take(2).enumerate() {
            let new_at_t = w.data_from_a().filter(|s| s.at == t && !s.seg.retransmit && s.seg.seq > highest_before(t)).count();
            assert_eq!(new_at_t, lt as usize, "limited_transmit={lt}, dupack {}", k + 1);
        }
    }
}

#[test]
fn newreno_partial_acks_repair_several_losses_without_timeout() {
    let mut w = Wire::new(no_sack(), no_sack(), 10 * MS);
    w.drop = Box::new(|_, i| i == 40 || i == 43 || i == 47);
    transfer(&mut w, 300_000);
    assert_eq!(w.b.stats.bytes_delivered, 300_000);
    assert_eq!(w.a.stats.fast_retransmits, 1, "one recovery episode");
    assert_eq!(w.a.stats.timeouts, 0);
    assert_eq!(w.a.stats.retransmits, 3, "one per lost segment, the later ones on partial ACKs");
    // Each partial ACK drives exactly one retransmission: they are one RTT apart.
    let times: Vec<SimTime> = w.data_from_a().filter(|s| s.seg.retransmit).map(|s| s.at).collect();
    assert!(times[1].since(times[0]) >= 20 * MS && times[2].since(times[1]) >= 20 * MS);
}

#[test]
fn newreno_slow_but_steady_restarts_the_timer_on_every_partial_ack() {
    // Eight losses in one window, repaired one per RTT (20 ms) by partial ACKs: 160 ms of
    // recovery against an RTO of 60 ms. RFC 6582 §4: "Impatient" restarts the timer on the
    // first partial ACK only, so it fires mid-recovery; "Slow-but-Steady" (FreeBSD 4.x,
    // Linux) restarts it on each and the partial ACKs repair every loss.
    let drops = [40, 42, 44, 46, 48, 50, 52, 54];
    let mut timeouts = Vec::new();
    for every in [false, true] {
        let mut c = TcpConfig { rto_every_partial_ack: every, ..no_sack() };
        c.rto.min = 60 * MS;
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        w.drop = Box::new(move |_, i| drops.contains(&i));
        transfer(&mut w, 300_000);
        assert_eq!(w.b.stats.bytes_delivered, 300_000);
        timeouts.push(w.a.stats.timeouts);
        if every {
            assert_eq!((w.a.stats.fast_retransmits, w.a.stats.retransmits), (1, 8), "one recovery, one retransmission per loss");
        }
    }
    assert!(timeouts[0] >= 1, "impatient: the timer fires during a 160 ms recovery ({timeouts:?})");
    assert_eq!(timeouts[1], 0, "slow-but-steady: no timeout");
}

#[test]
fn reno_recovery_needs_a_timeout_for_multiple_losses() {
    // Classic Reno leaves recovery on the first new ACK; several losses in one window then
    // end in a timeout (the behaviour behind study 004's "deadlock").
    let c = TcpConfig { recovery: RecoveryKind::Reno, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.drop = Box::new(|_, i| i == 40 || i == 42 || i == 44 || i == 46);
    transfer(&mut w, 300_000);
    assert_eq!(w.b.stats.bytes_delivered, 300_000);
    assert!(w.a.stats.timeouts >= 1 || w.a.stats.fast_retransmits >= 2);
}

#[test]
fn sack_recovers_several_losses_in_one_window_in_one_rtt() {
    let mut w = Wire::new(cfg(), cfg(), 10 * MS);
    w.drop = Box::new(|_, i| i == 40 || i == 43 || i == 47);
    transfer(&mut w, 300_000);
    assert_eq!(w.b.stats.bytes_delivered, 300_000);
    assert_eq!(w.a.stats.fast_retransmits, 1);
    assert_eq!(w.a.stats.timeouts, 0);
    assert_eq!(w.a.stats.retransmits, 3);
    let times: Vec<SimTime> = w.data_from_a().filter(|s| s.seg.retransmit).map(|s| s.at).collect();
    // Unlike NewReno (one hole per RTT), all holes are repaired within one RTT of the first
    // retransmission, and recovery ends sooner.
    assert!(times[2].since(times[0]) <= 20 * MS, "{times:?}");
    let exit = |w: &Wire| w.events.iter().find(|(_, a, e)| *a && e.kind == TcpEventKind::RecoveryExit).unwrap().0;
    let mut nr = Wire::new(no_sack(), no_sack(), 10 * MS);
    nr.drop = Box::new(|_, i| i == 40 || i == 43 || i == 47);
    transfer(&mut nr, 300_000);
    assert!(exit(&w) < exit(&nr), "SACK {:?} vs NewReno {:?}", exit(&w), exit(&nr));
    // The receiver reported the holes with SACK blocks, most recent first.
    let with_sack = w.acks_from_b().find(|s| s.seg.sack_count() >= 2).expect("SACK blocks sent");
    let blocks: Vec<_> = with_sack.seg.sack_blocks().collect();
    assert!(blocks[0].0 > blocks[1].0);
}

#[test]
fn sack_blocks_stay_few_and_most_recent_first_behind_long_holes() {
    // Two holes early in a large window: hundreds of segments arrive out of order behind them.
    let mut w = Wire::new(cfg(), cfg(), 10 * MS);
    w.drop = Box::new(|_, i| i == 200 || i == 600);
    w.open();
    w.write(3_000_000);
    let mut max_recent = 0;
    let mut acks_checked = 0;
    while w.now < SimTime(2_000 * MS.as_ps()) && w.step() {
        // One remembered entry per out-of-order block, never one per segment.
        max_recent = max_recent.max(w.b.sack_recent.len());
        assert!(w.b.sack_recent.len() <= w.b.ooo.len(), "{} entries for {} blocks", w.b.sack_recent.len(), w.b.ooo.len());
    }
    // Every ACK with SACK blocks: the first one holds the newest data seen so far (RFC 2018
    // §4), blocks are distinct and lie above the cumulative ACK.
    let mut newest = 0u64;
    for s in w.log.iter().filter(|s| !s.a_to_b) {
        let blocks: Vec<_> = s.seg.sack_blocks().collect();
        if let Some(&(a, b)) = blocks.first() {
            assert!(a > s.seg.ack && b > a);
            assert!(b >= newest, "first block {a}..{b} is not the newest ({newest})");
            newest = newest.max(b);
            for (i, x) in blocks.iter().enumerate() {
                assert!(!blocks[..i].contains(x));
            }
            acks_checked += 1;
        }
    }
    assert!(acks_checked > 300, "{acks_checked} ACKs with SACK blocks");
    assert!((1..=2).contains(&max_recent), "{max_recent}");
    assert_eq!(w.b.stats.bytes_delivered, 3_000_000, "the holes were repaired");
}

#[test]
fn rto_fires_exactly_and_backs_off_per_policy() {
    for (backoff, expect) in [
        (Backoff::Exponential, vec![1u64, 2, 4, 8]),
        (Backoff::Linear, vec![1, 2, 3, 4]),
        (Backoff::Hybrid { switch_after: 1 }, vec![1, 2, 3, 4]),
        (Backoff::Hybrid { switch_after: 2 }, vec![1, 2, 4, 5]),
        (Backoff::LinearThenExponential { switch_after: 2 }, vec![1, 2, 3, 6]),
        (Backoff::LinearThenExponential { switch_after: 1 }, vec![1, 2, 4, 8]),
    ] {
        let mut c = no_sack();
        c.rto = RtoPolicy {
            min: SimDuration::from_micros(200),
            max: SimDuration::from_secs(60),
            initial: SimDuration::from_secs(1),
            granularity: SimDuration::ZERO,
            backoff,
            backoff_reset: crate::tcp::rtt::BackoffReset::RttSample,
            randomize: 0.0,
            slop: SimDuration::ZERO,
        };
        let mut w = Wire::new(c.clone(), c, SimDuration::from_micros(50));
        // Lose everything from segment 10 on for a while: the sender times out repeatedly.
        w.drop = Box::new(|s, i| i >= 10 && s.at < SimTime::ZERO + SimDuration::from_millis(20));
        transfer(&mut w, 20_000);
        assert_eq!(w.b.stats.bytes_delivered, 20_000);
        let fires: Vec<SimTime> = w.events.iter().filter(|(_, a, e)| *a && e.kind == TcpEventKind::Timeout).map(|e| e.0).collect();
        assert!(fires.len() >= 4, "{backoff:?}: {fires:?}");
        let gaps: Vec<u64> = fires.windows(2).map(|p| p[1].since(p[0]).as_ps()).collect();
        // The gap after the n-th timeout is base·m(n); m(1) = 2 for every policy here.
        let base = gaps[0] / expect[1];
        assert_eq!(base * expect[1], gaps[0]);
        let want: Vec<u64> = (0..3).map(|k| base * expect[k + 1]).collect();
        // Exact to the picosecond, with a sub-millisecond RTO.
        assert_eq!(gaps[..3].to_vec(), want, "{backoff:?}");
        assert!(base < SimDuration::from_millis(5).as_ps());
    }
}

#[test]
fn delayed_ack_every_second_segment_and_timer() {
    let c = TcpConfig { delack_segments: 2, delack_timeout: 40 * MS, initial_cwnd: 3, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 5 * MS);
    w.open();
    w.write(3_000);
    w.run_until(SimTime(17 * MS.as_ps()));
    // 3 segments arrived at ~15 ms: one ACK after the 2nd, the 3rd waits for the timer.
    let acks: Vec<SimTime> = w.acks_from_b().filter(|s| s.seg.ack > 1).map(|s| s.at).collect();
    assert_eq!(acks.len(), 1);
    w.run_until(SimTime(100 * MS.as_ps()));
    let acks: Vec<(SimTime, u64)> = w.acks_from_b().filter(|s| s.seg.ack > 1).map(|s| (s.at, s.seg.ack)).collect();
    assert_eq!(acks.len(), 2);
    assert_eq!(acks[1].1, 3_001);
    assert_eq!(acks[1].0.since(acks[0].0), 40 * MS, "the delayed-ACK timer fired 40 ms later");
}

#[test]
fn out_of_order_and_hole_filling_are_acked_at_once() {
    let c = TcpConfig { delack_segments: 2, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 5 * MS);
    w.drop = Box::new(|_, i| i == 0);
    transfer(&mut w, 10_000);
    assert_eq!(w.b.stats.bytes_delivered, 10_000);
    // Every out-of-order arrival produced an immediate duplicate ACK of byte 1.
    let dups = w.acks_from_b().filter(|s| s.seg.ack == 1).count();
    assert!(dups >= 3, "{dups}");
    // The retransmission filled the hole and was acknowledged immediately (same instant).
    let rtx = w.data_from_a().find(|s| s.seg.retransmit).unwrap().at;
    let fill_ack = w.acks_from_b().find(|s| s.seg.ack > 1).unwrap().at;
    assert_eq!(fill_ack.since(rtx), 5 * MS);
}

#[test]
fn zero_window_persist_and_reopen() {
    let ca = TcpConfig { rcvbuf: 1 << 20, ..no_sack() };
    let cb = TcpConfig { rcvbuf: 8_000, ..no_sack() };
    let mut w = Wire::new(ca, cb, 1 * MS);
    w.b.set_auto_read(false);
    w.open();
    w.write(20_000);
    w.run_until(SimTime(2_000 * MS.as_ps()));
    assert_eq!(w.b.readable(), 8_000, "the receiver buffer filled");
    assert_eq!(w.a.outstanding(), 0, "all in-window data acknowledged");
    // The sender probes the closed window (probe segments carry an old sequence number).
    let probes = w.log.iter().filter(|s| s.a_to_b && s.seg.len == 0 && s.seg.seq + 1 == w.a.snd_una()).count();
    assert!(probes >= 2, "{probes}");
    // The application reads; the window reopens and the transfer completes.
    let mut read = 0;
    while read < 20_000 {
        let n = w.b.read(w.now, u64::MAX, &mut w.out);
        w.emit(false);
        read += n;
        let t = w.now + 500 * MS;
        w.run_until(t);
    }
    assert_eq!(read, 20_000);
}

#[test]
fn window_scaling_allows_large_windows() {
    let c = TcpConfig { rcvbuf: 10_000_000, sndbuf: 10_000_000, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 50 * MS);
    w.open();
    w.write(10_000_000);
    let mut max_out = 0;
    while w.now < SimTime(3_000 * MS.as_ps()) && w.step() {
        max_out = max_out.max(w.a.outstanding());
    }
    assert!(max_out > 1_000_000, "window beyond 64 KB: {max_out}");
    assert!(max_out <= 10_000_000);
}

#[test]
fn send_buffer_bounds_unacknowledged_data() {
    let c = TcpConfig { sndbuf: 20_000, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 50 * MS);
    w.open();
    assert_eq!(w.write(1_000_000), 20_000, "write accepts only what fits");
    w.run_until(SimTime(1_000 * MS.as_ps()));
    assert!(w.a.send_space() > 0);
    assert!(w.a.outstanding() <= 20_000);
}

#[test]
fn syn_loss_is_retransmitted_after_initial_rto() {
    let mut w = Wire::new(cfg(), cfg(), 10 * MS);
    let mut first = true;
    w.open();
    // Drop the first SYN by hand.
    w.queue.retain(|_| {
        let keep = !first;
        first = false;
        keep
    });
    w.write(5_000);
    w.run_until_idle(100_000);
    assert_eq!(w.b.stats.bytes_delivered, 5_000);
    let syns: Vec<SimTime> = w.log.iter().filter(|s| s.a_to_b && s.seg.has(flags::SYN)).map(|s| s.at).collect();
    assert_eq!(syns, vec![SimTime::ZERO, SimTime::ZERO + SimDuration::from_secs(1)]);
}

#[test]
fn lost_syn_ack_is_sent_again_when_the_syn_is_retransmitted() {
    let mut w = Wire::new(cfg(), cfg(), 10 * MS);
    w.open();
    w.step(); // b takes the SYN and answers SYN-ACK.
    let before = w.queue.len();
    w.queue.retain(|p| p.to_b); // The SYN-ACK is lost.
    assert_eq!(w.queue.len(), before - 1);
    w.write(5_000);
    w.run_until_idle(100_000);
    assert_eq!(w.b.stats.bytes_delivered, 5_000);
    // The retransmitted SYN (1 s) reaches b 10 ms later, when b's own SYN-ACK timer (1 s
    // after the first) also fires: b answers with SYN-ACKs, each with both flags.
    let t = SimTime::ZERO + SimDuration::from_secs(1) + 10 * MS;
    let from_b_then: Vec<u8> = w.log.iter().filter(|s| !s.a_to_b && s.at == t).map(|s| s.seg.flags).collect();
    assert!(!from_b_then.is_empty() && from_b_then.iter().all(|&f| f & (flags::SYN | flags::ACK) == flags::SYN | flags::ACK), "{from_b_then:?}");
}

/// Every byte is delivered exactly once and in order under random loss, reordering and
/// duplication, for every recovery kind, over many seeds.
#[test]
fn reliable_delivery_under_random_impairment() {
    use crate::tcp::cc::{BicConfig, CcConfig, RenoConfig};
    let bic = CcConfig::Bic(BicConfig { initial_ssthresh: 0, ..BicConfig::default() });
    let kinds = [
        (true, RecoveryKind::LinuxSack, bic),
        (false, RecoveryKind::LinuxSack, bic),
        (true, RecoveryKind::Auto, CcConfig::NewReno(RenoConfig::default())),
        (true, RecoveryKind::Auto, CcConfig::Reno(RenoConfig { abc_limit: 2, max_ssthresh: 0, exact_increase: false })),
        (false, RecoveryKind::Auto, CcConfig::NewReno(RenoConfig::default())),
        (false, RecoveryKind::Auto, CcConfig::Reno(RenoConfig::default())),
    ];
    for seed in 0..40u64 {
        for (sack, rec, cc) in kinds {
            let c = TcpConfig { sack, recovery: rec, cc, timestamps: seed % 2 == 0, delack_segments: 1 + (seed % 2) as u32, ..cfg() };
            let mut w = Wire::new(c.clone(), c, 2 * MS);
            let mut rng = Rng::from_seed(seed);
            let loss = [0.0, 0.01, 0.05, 0.15][(seed % 4) as usize];
            let bytes = 50_000 + rng.below(200_000);
            w.open();
            w.write(bytes);
            w.a.close(w.now, &mut w.out);
            w.emit(true);
            let mut steps = 0;
            while w.step() {
                steps += 1;
                assert!(steps < 2_000_000, "seed {seed}: no progress");
                // Impair the wire in both directions: drop, duplicate, delay (reorder).
                let mut extra = vec![];
                w.queue.retain_mut(|p| {
                    if p.order < u64::MAX / 2 {
                        p.order += u64::MAX / 2; // mark as already impaired
                        if rng.bernoulli(loss) {
                            return false;
                        }
                        if rng.bernoulli(0.02) {
                            let mut d = *p;
                            d.at += SimDuration::from_micros(rng.below(3000));
                            extra.push(d);
                        }
                        if rng.bernoulli(0.05) {
                            p.at += SimDuration::from_micros(rng.below(3000));
                        }
                    }
                    true
                });
                w.queue.extend(extra);
            }
            assert_eq!(w.b.stats.bytes_delivered, bytes, "seed {seed} sack={sack} {rec:?}");
            assert!(w.a.send_done(), "seed {seed}: sender not done");
            assert_eq!(w.b.rcv_nxt(), bytes + 2, "data + SYN + FIN, seed {seed}");
        }
    }
}

#[test]
fn linux_rate_halving_shrinks_the_window_gradually() {
    use crate::tcp::cc::{BicConfig, CcConfig};
    let c = TcpConfig { recovery: RecoveryKind::LinuxSack, cc: CcConfig::Bic(BicConfig { initial_ssthresh: 0, ..BicConfig::default() }), ..cfg() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.ps_per_byte = 8_000; // 1 Gb/s: ACKs come back one by one
    w.drop = Box::new(|_, i| i == 200);
    w.open();
    w.write(2_000_000);
    let mut windows = vec![];
    let mut entered = false;
    while w.step() {
        if w.a.in_recovery() {
            entered = true;
            windows.push(w.a.cwnd());
        } else if entered {
            break;
        }
    }
    assert!(entered);
    assert_eq!(w.a.stats.timeouts, 0);
    // The window never jumps: each ACK in recovery moves it by at most one segment, and it
    // ends near ssthresh (BIC: 819/1024 of the window at the loss).
    assert!(windows.windows(2).all(|p| p[0].abs_diff(p[1]) <= 1000 || p[1] < p[0]), "{windows:?}");
    let first = windows[0];
    let last = *windows.last().unwrap();
    assert!(last < first, "rate-halving reduced the window: {first} → {last}");
    assert!(w.a.cwnd() <= w.a.ssthresh() + 1000);
}

#[test]
fn linux_sack_resends_a_lost_retransmission_without_a_timeout() {
    use crate::tcp::cc::{BicConfig, CcConfig};
    // Segment 200 is lost, and so is its first retransmission.
    let run = |recovery: RecoveryKind| {
        let c = TcpConfig { recovery, cc: CcConfig::Bic(BicConfig { initial_ssthresh: 0, ..BicConfig::default() }), ..cfg() };
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        w.ps_per_byte = 8_000; // 1 Gb/s
        let mut lost = None;
        let mut rxt_dropped = false;
        w.drop = Box::new(move |s, i| {
            if i == 200 {
                lost = Some(s.seg.seq);
                return true;
            }
            if s.seg.retransmit && Some(s.seg.seq) == lost && !rxt_dropped {
                rxt_dropped = true;
                return true;
            }
            false
        });
        transfer(&mut w, 2_000_000);
        assert_eq!(w.b.stats.bytes_delivered, 2_000_000);
        let seq = w.data_from_a().filter(|s| !s.seg.retransmit).nth(200).unwrap().seg.seq;
        let resent: Vec<SimTime> = w.data_from_a().filter(|s| s.seg.retransmit && s.seg.seq == seq).map(|s| s.at).collect();
        (w.a.stats.timeouts, resent)
    };
    // Linux 2.6: data sent after the retransmission is SACKed, so the retransmission is lost
    // and goes again about one RTT later, within the same recovery.
    let (timeouts, resent) = run(RecoveryKind::LinuxSack);
    assert_eq!(timeouts, 0);
    assert_eq!(resent.len(), 2, "{resent:?}");
    let gap = resent[1].since(resent[0]);
    assert!(gap >= 20 * MS && gap < 40 * MS, "sent again one RTT later: {gap:?}");
    // RFC 6675 has no such rule: only the retransmission timer repairs it.
    let (timeouts, resent) = run(RecoveryKind::Sack);
    assert_eq!(timeouts, 1);
    assert_eq!(resent.len(), 2, "{resent:?}");
}

#[test]
fn linux_receive_window_growth_acks_every_segment_while_the_window_grows() {
    // MSS 1000, no window scaling at 40 kB: the first window is 4 segments (Linux
    // tcp_select_initial_window) and grows by 2 segments per segment up to 40 kB, i.e. over
    // the first 18 segments, each ACKed at once; then ACKs cover two segments.
    let b = TcpConfig { delack_segments: 2, rcvbuf: 40_000, rcv_window_growth: true, ..cfg() };
    let mut w = Wire::new(cfg(), b.clone(), 10 * MS);
    transfer(&mut w, 100_000);
    assert_eq!(w.b.stats.bytes_delivered, 100_000);
    assert_eq!(w.syn_ack_window(), 4_000);
    let acks = w.data_acks(100_001);
    let steps = ack_steps(&acks);
    assert!(steps[..17].iter().all(|&d| d == 1_000), "one ACK per segment while growing: {steps:?}");
    assert!(steps[18..steps.len() - 1].iter().all(|&d| d == 2_000), "then every second segment: {steps:?}");
    // The advertised window grew from 4 segments by 2 per segment, then stayed at 40 kB.
    assert_eq!(acks[0].1, 6_000);
    assert_eq!(acks[1].1, 8_000);
    assert_eq!(acks.last().unwrap().1, 40_000);
    // Without growth the receiver delays ACKs from the start and offers all 40 kB at once.
    let mut w = Wire::new(cfg(), TcpConfig { rcv_window_growth: false, ..b }, 10 * MS);
    transfer(&mut w, 100_000);
    assert_eq!(w.syn_ack_window(), 40_000);
    assert_eq!(w.first_acks(3), vec![2_001, 4_001, 6_001]);
}

#[test]
fn linux_4_20_first_receive_window_is_64k_without_a_segment_cap() {
    // MSS 9000 and a 256 MB buffer: window scale 13 (unit 8192 bytes, below the MSS). Linux
    // 4.20 tcp_select_initial_window offers min(space, 65535) = 65535 with no segment cap, so
    // the window cuts the sender's IW10 to 7 segments; Linux 2.6.16 offers 2 segments (MSS
    // above 4380), 18000 bytes.
    let run = |rule| {
        let a = TcpConfig { mss: 9000, initial_cwnd: 10, ..cfg() };
        let b = TcpConfig { mss: 9000, delack_segments: 2, rcvbuf: 256 << 20, rcv_window_growth: true, rcv_window_rule: rule, ..cfg() };
        let mut w = Wire::new(a, b, 10 * MS);
        transfer(&mut w, 900_000);
        assert_eq!(w.b.stats.bytes_delivered, 900_000);
        assert_eq!(w.b.window_shift(), 13);
        let syn_ack = w.syn_ack_window();
        let t0 = w.data_from_a().next().unwrap().at;
        let first_flight = w.data_from_a().filter(|s| s.at == t0).count();
        let windows: Vec<u64> = w.acks_from_b().filter(|s| s.seg.ack > 1).take(3).map(|s| s.seg.window).collect();
        (syn_ack, first_flight, windows)
    };
    let (syn_ack, flight, windows) = run(RcvWindowRule::Linux420);
    assert_eq!(syn_ack, 65_535);
    assert_eq!(flight, 7, "65535 / 9000 full segments");
    // Each in-order segment adds 2·MSS to rcv_ssthresh; the scaled window is a multiple of
    // 8192: 83535 → 81920, 101535 → 98304, 119535 → 114688.
    assert_eq!(windows, vec![81_920, 98_304, 114_688]);
    let (syn_ack, flight, windows) = run(RcvWindowRule::Linux2616);
    assert_eq!(syn_ack, 18_000);
    assert_eq!(flight, 2);
    // 36000 → 32768, 54000 → 49152, 72000 → 65536.
    assert_eq!(windows, vec![32_768, 49_152, 65_536]);
}

#[test]
fn linux_4_20_receive_window_grows_from_64k_with_a_quick_ack_per_step() {
    // MSS 1000, 100 kB buffer (scale 1): the first window is 65535 bytes and grows by 2
    // segments per segment up to 100 kB, i.e. over the first 18 segments (65535 + 18·2000 ≥
    // 100000), each ACKed at once; then ACKs cover two segments.
    let b = TcpConfig { delack_segments: 2, rcvbuf: 100_000, rcv_window_growth: true, rcv_window_rule: RcvWindowRule::Linux420, ..cfg() };
    let mut w = Wire::new(cfg(), b.clone(), 10 * MS);
    transfer(&mut w, 200_000);
    assert_eq!(w.b.stats.bytes_delivered, 200_000);
    assert_eq!(w.syn_ack_window(), 65_535);
    let acks = w.data_acks(200_001);
    let steps = ack_steps(&acks);
    assert!(steps[..17].iter().all(|&d| d == 1_000), "one ACK per segment while growing: {steps:?}");
    assert!(steps[17..steps.len() - 1].iter().all(|&d| d == 2_000), "then every second segment: {steps:?}");
    for (k, &(_, win)) in acks[..18].iter().enumerate() {
        let grown = (65_535 + 2_000 * (k as u64 + 1)).min(100_000);
        assert_eq!(win, grown / 2 * 2, "window after segment {}", k + 1);
    }
    assert_eq!(acks.last().unwrap().1, 100_000);
    // A buffer within 64 kB is offered whole from the first window: no growth, so the
    // receiver delays its ACKs from the start (Linux 2.6.16 would start at 4 segments).
    let mut w = Wire::new(cfg(), TcpConfig { rcvbuf: 40_000, ..b }, 10 * MS);
    transfer(&mut w, 100_000);
    assert_eq!(w.syn_ack_window(), 40_000);
    assert_eq!(w.first_acks(3), vec![2_001, 4_001, 6_001]);
}

#[test]
fn jumbo_receive_buffers_grow_the_window_only_up_to_three_eighths_of_tcp_rmem_max() {
    // Linux 2.6.16 with Chelsio's in-kernel driver (p0 EVIDENCE.md §4): a 9000-byte segment
    // sits in a 16 KB buffer, truesize 16564, so tcp_grow_window's check #2 fails
    // (¾·16564 = 12423 > 9000) and __tcp_grow_window grows the window, with a quick ACK for
    // the segment, only while rcv_ssthresh ≤ ½·¾·tcp_rmem[2].
    let run = |rmem_max: u64| {
        let a = TcpConfig { mss: 9000, ..cfg() };
        let b = TcpConfig {
            mss: 9000,
            delack_segments: 2,
            rcvbuf: 256 << 20,
            rcv_window_growth: true,
            rcv_window_rule: RcvWindowRule::Linux2616,
            rx_truesize: 16_564,
            tcp_rmem_max: rmem_max,
            ..cfg()
        };
        let mut w = Wire::new(a, b, 10 * MS);
        transfer(&mut w, 900_000);
        assert_eq!(w.b.stats.bytes_delivered, 900_000);
        w.data_acks(900_000)
    };
    // The untuned 2.6.14-era tcp_rmem[2] = 174760: ⅜ of it is 65535. rcv_ssthresh grows
    // 18000 → 36000 → 54000 → 72000 on the first three segments (each ACKed at once), then
    // stops: ACKs cover two segments and the window stays at 72000, 65536 in scale-13 units.
    let acks = run(174_760);
    assert_eq!(acks[..3].iter().map(|a| a.0).collect::<Vec<_>>(), vec![9_001, 18_001, 27_001]);
    let steps = ack_steps(&acks);
    assert!(steps[3..].iter().all(|&d| d == 18_000), "delayed ACKs once growth stops: {steps:?}");
    assert!(acks[3..].iter().all(|a| a.1 == 65_536), "the window sticks: {acks:?}");
    // A tuned tcp_rmem[2] of 256 MB: the 100 segments all fall in the growth phase, each
    // ACKed at once, each ACK offering more.
    let acks = run(256 << 20);
    assert!(ack_steps(&acks).iter().all(|&d| d == 9_000), "{acks:?}");
    assert!(acks.windows(2).all(|p| p[1].1 >= p[0].1) && acks.last().unwrap().1 > 1_000_000);
    // A 9.3 KB truesize (an MTU-sized buffer) passes check #2 whatever tcp_rmem[2] is.
    let cfg_b = |truesize| TcpConfig { mss: 9000, rcv_window_growth: true, rx_truesize: truesize, tcp_rmem_max: 174_760, ..cfg() };
    assert!(super::receive::rx_truesize_fits(1 << 30, 9000, &cfg_b(9_300)));
    assert!(!super::receive::rx_truesize_fits(65_536, 9000, &cfg_b(16_564)));
    assert!(super::receive::rx_truesize_fits(65_535, 9000, &cfg_b(16_564)));
    // A 64 KB truesize for a 1000-byte segment: ½·¾·65536 = 24576 first fits at j = 5
    // (768 ≤ 1000), where the target is 65535 >> 5 = 2047.
    let small = TcpConfig { rx_truesize: 65_536, ..cfg_b(0) };
    assert!(super::receive::rx_truesize_fits(2_047, 1000, &small));
    assert!(!super::receive::rx_truesize_fits(2_048, 1000, &small));
}

#[test]
fn linux_4_20_out_of_order_segments_grow_the_window_on_sack_connections() {
    // Segment 20 is lost. The 4.20 receiver grows rcv_ssthresh for each out-of-order segment
    // too (tcp_data_queue_ofo, SACK connections only), so its duplicate ACKs offer more and
    // more; Linux 2.6.16, and 4.20 without SACK, keep the window of the duplicate ACKs fixed.
    let run = |rule, sack| {
        let a = TcpConfig { sack, ..cfg() };
        let b = TcpConfig { sack, rcvbuf: 1_000_000, rcv_window_growth: true, rcv_window_rule: rule, ..cfg() };
        let mut w = Wire::new(a, b, 10 * MS);
        w.drop = Box::new(|_, i| i == 20);
        transfer(&mut w, 200_000);
        assert_eq!(w.b.stats.bytes_delivered, 200_000);
        let hole = w.data_from_a().nth(20).unwrap().seg.seq;
        let dup_windows: Vec<u64> = w.acks_from_b().filter(|s| s.seg.ack == hole).map(|s| s.seg.window).collect();
        assert!(dup_windows.len() >= 4, "{dup_windows:?}");
        dup_windows
    };
    let grown = run(RcvWindowRule::Linux420, true);
    assert!(grown.windows(2).all(|p| p[1] > p[0]), "{grown:?}");
    for (rule, sack) in [(RcvWindowRule::Linux2616, true), (RcvWindowRule::Linux420, false)] {
        let fixed = run(rule, sack);
        assert!(fixed.windows(2).all(|p| p[1] == p[0]), "{rule:?} sack {sack}: {fixed:?}");
    }
}

#[test]
fn cwnd_validation_stops_growth_while_the_peer_window_limits_the_sender() {
    // b's 8-segment buffer, not the congestion window, limits a after slow start's first RTTs.
    let rwnd_limited = |validation: bool| {
        let ca = TcpConfig { cwnd_validation: validation, ..cfg() };
        let cb = TcpConfig { rcvbuf: 8_000, window_scaling: false, ..cfg() };
        let mut w = Wire::new(ca, cb, 20 * MS);
        w.b.set_auto_read(true);
        w.open();
        w.write(10_000_000);
        w.run_until(SimTime(2_000 * MS.as_ps()));
        assert!(w.a.outstanding() <= 8_000, "the peer's window bounds the flight");
        (w.a.cwnd(), w.b.stats.bytes_delivered)
    };
    let (kept, delivered_kept) = rwnd_limited(true);
    let (grown, delivered_grown) = rwnd_limited(false);
    // RFC 7661: growth stops within about a segment of the flight the window allows.
    assert!(kept <= 10_000, "validated cwnd {kept} grew past the window-limited flight");
    // Without validation every ACK of new data grows it (ns-3's behaviour).
    assert!(grown >= 40_000, "unvalidated cwnd {grown} should keep growing");
    // The window, not cwnd, sets the pace: the same data gets through either way.
    assert_eq!(delivered_kept, delivered_grown);
}

#[path = "tests_timing.rs"]
mod timing;

#[path = "tests_close.rs"]
mod close;

#[path = "tests_sack.rs"]
mod sack;

#[path = "tests_ecn.rs"]
mod ecn;

#[path = "tests_bsd.rs"]
mod bsd;

#[path = "tests_delivered.rs"]
mod delivered;

#[path = "tests_segment_checks.rs"]
mod segment_checks;

#[path = "tests_linux24.rs"]
mod linux24;

#[path = "tests_input.rs"]
mod input;

#[path = "tests_bsd410.rs"]
mod bsd410;
#[path = "tests_dsack.rs"]
mod dsack_undo;

#[path = "tests_karn.rs"]
mod karn;

#[path = "tests_rate.rs"]
mod rate_pacing;

#[path = "tests_nagle.rs"]
mod nagle;
