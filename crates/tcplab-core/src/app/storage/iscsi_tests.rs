//! iSCSI: wire sizes, transfer plans and the initiator/target exchange, each expected number
//! derived from RFC 3720's rules and defaults (EVIDENCE §4) in the comments.

use std::collections::{BTreeMap, VecDeque};

use super::*;

const KIB: u64 = 1024;

fn kinds(plan: &[PlannedPdu], d: Direction) -> Vec<(PduKind, u64, u64)> {
    plan.iter().filter(|p| p.direction == d).map(|p| (p.kind, p.offset, p.data)).collect()
}

#[test]
fn a_pdu_is_the_bhs_plus_its_data_padded_to_4_plus_the_digests() {
    let p = SessionParams::default();
    assert_eq!(p.pdu_wire_bytes(0), 48, "BHS only (§10.2.1)");
    assert_eq!(p.pdu_wire_bytes(8192), 48 + 8192);
    assert_eq!(p.pdu_wire_bytes(1), 48 + 4, "1 byte padded to 4 (§10.2.3)");
    assert_eq!(p.pdu_wire_bytes(1001), 48 + 1004);
    assert_eq!(p.pdu_wire_bytes(1004), 48 + 1004);
    let d = SessionParams { header_digest: Digest::Crc32c, data_digest: Digest::Crc32c, ..p };
    assert_eq!(d.pdu_wire_bytes(0), 48 + 4, "header digest; no data, no data digest");
    assert_eq!(d.pdu_wire_bytes(8192), 48 + 4 + 8192 + 4);
    assert_eq!(d.pdu_wire_bytes(1), 48 + 4 + 4 + 4);
    assert_eq!(d.header_bytes(), 52);
}

#[test]
fn a_256_kib_read_at_mrdsl_8192_is_32_data_in_pdus_the_last_with_the_status() {
    let p = SessionParams::default();
    let n = 256 * KIB;
    let plan = plan_read(n, &p);
    // 262144 / 8192 = 32 Data-In, one sequence (MaxBurstLength 262144); status collapsed.
    assert_eq!(kinds(&plan, Direction::ToTarget), vec![(PduKind::Command, 0, 0)]);
    let data_in = kinds(&plan, Direction::ToInitiator);
    assert_eq!(data_in.len(), 32);
    assert!(data_in[..31].iter().enumerate().all(|(i, &k)| k == (PduKind::DataIn, i as u64 * 8192, 8192)));
    assert_eq!(data_in[31], (PduKind::DataInStatus, 31 * 8192, 8192));
    let t = Totals::of(&plan, Some(Direction::ToInitiator), &p);
    assert_eq!(t, Totals { pdus: 32, payload: n, header: 32 * 48, wire: n + 32 * 48 });
    assert_eq!(t.overhead(), 1536);
    assert!((t.efficiency() - 262_144.0 / 263_680.0).abs() < 1e-12, "0.58 % header overhead (EVIDENCE §4)");
    assert_eq!(Totals::of(&plan, None, &p).wire, n + 33 * 48);
    // Without phase collapse a 48-byte SCSI Response follows the 32nd Data-In.
    let q = SessionParams { phase_collapse: false, ..p };
    let plan = plan_read(n, &q);
    assert_eq!(plan.last().map(|x| (x.kind, x.wire)), Some((PduKind::Response, 48)));
    assert_eq!(plan[32].kind, PduKind::DataIn);
    assert_eq!(Totals::of(&plan, Some(Direction::ToInitiator), &q), Totals { pdus: 33, payload: n, header: 33 * 48, wire: n + 33 * 48 });
}

#[test]
fn data_in_pdus_end_at_the_mrdsl_and_at_every_sequence_end() {
    // MaxBurstLength 16384, initiator MRDSL 12288, 40000 bytes: sequences [0, 16384),
    // [16384, 32768), [32768, 40000); each cut at 12288: 12288 + 4096 twice, then 7232.
    let p = SessionParams { max_burst_length: 16_384, first_burst_length: 16_384, max_recv_data_segment_length_initiator: 12_288, ..SessionParams::default() };
    let data: Vec<u64> = plan_read(40_000, &p)[1..].iter().map(|x| x.data).collect();
    assert_eq!(data, vec![12_288, 4096, 12_288, 4096, 7232]);
    // 100000 bytes at 8192: ⌈100000/8192⌉ = 13 PDUs, the last 100000 − 12·8192 = 1696.
    let plan = plan_read(100_000, &SessionParams::default());
    assert_eq!(plan.len(), 14);
    assert_eq!(plan[13].data, 1696);
}

#[test]
fn a_write_with_the_defaults_sends_immediate_data_then_one_r2t_burst() {
    let p = SessionParams::default();
    let n = 256 * KIB;
    let plan = plan_write(n, &p);
    // ImmediateData = Yes: min(262144, FirstBurst 65536, MRDSL 8192) = 8192 in the command.
    // InitialR2T = Yes: nothing more unsolicited; one R2T for the remaining 253952 bytes
    // (≤ MaxBurstLength 262144), answered by 253952 / 8192 = 31 Data-Out; then the Response.
    assert_eq!((plan[0].kind, plan[0].data, plan[0].wire), (PduKind::Command, 8192, 8240));
    assert_eq!((plan[1].kind, plan[1].offset, plan[1].solicited, plan[1].wire), (PduKind::R2t, 8192, 253_952, 48));
    assert!(plan[2..33].iter().enumerate().all(|(i, x)| x.kind == PduKind::DataOut && x.offset == 8192 * (i as u64 + 1) && x.data == 8192));
    assert_eq!(plan.len(), 34);
    assert_eq!(plan[33].kind, PduKind::Response);
    assert_eq!(Totals::of(&plan, Some(Direction::ToTarget), &p), Totals { pdus: 32, payload: n, header: 32 * 48, wire: n + 32 * 48 });
    assert_eq!(Totals::of(&plan, Some(Direction::ToInitiator), &p), Totals { pdus: 2, payload: 0, header: 96, wire: 96 });
    // ImmediateData = No: no data before the R2T, which solicits all 262144 bytes.
    let q = SessionParams { immediate_data: false, ..p };
    let plan = plan_write(n, &q);
    assert_eq!((plan[0].kind, plan[0].data), (PduKind::Command, 0));
    assert_eq!((plan[1].kind, plan[1].offset, plan[1].solicited), (PduKind::R2t, 0, n));
    assert_eq!(plan.iter().filter(|x| x.kind == PduKind::DataOut).count(), 32);
}

#[test]
fn a_write_with_initial_r2t_no_sends_the_first_burst_unsolicited() {
    let p = SessionParams { initial_r2t: false, ..SessionParams::default() };
    let n = 256 * KIB;
    let plan = plan_write(n, &p);
    // Unsolicited: FirstBurstLength 65536 = 8192 immediate + 7 Data-Out of 8192 (offsets
    // 8192 … 57344); then one R2T for 262144 − 65536 = 196608 bytes: 24 Data-Out.
    assert_eq!(plan[0].data, 8192);
    let unsolicited: Vec<u64> = plan[1..8].iter().map(|x| x.offset).collect();
    assert_eq!(unsolicited, (1..8).map(|i| i * 8192).collect::<Vec<_>>());
    assert!(plan[1..8].iter().all(|x| x.kind == PduKind::DataOut && x.data == 8192));
    assert_eq!((plan[8].kind, plan[8].offset, plan[8].solicited), (PduKind::R2t, 65_536, 196_608));
    assert_eq!(plan[9..].iter().filter(|x| x.kind == PduKind::DataOut).count(), 24);
    assert_eq!(Totals::of(&plan, Some(Direction::ToTarget), &p).pdus, 32);
    // ImmediateData = No as well: 8 unsolicited Data-Out, the R2T still at 65536.
    let q = SessionParams { immediate_data: false, ..p };
    let plan = plan_write(n, &q);
    assert_eq!(plan[0].data, 0);
    assert_eq!(plan[1..9].iter().filter(|x| x.kind == PduKind::DataOut).count(), 8);
    assert_eq!((plan[9].kind, plan[9].offset), (PduKind::R2t, 65_536));
    // 20000 bytes < FirstBurstLength: 8192 immediate, Data-Out 8192 and 3616, no R2T.
    let plan = plan_write(20_000, &p);
    assert_eq!(kinds(&plan, Direction::ToTarget), vec![(PduKind::Command, 0, 8192), (PduKind::DataOut, 8192, 8192), (PduKind::DataOut, 16_384, 3616)]);
    assert_eq!(kinds(&plan, Direction::ToInitiator), vec![(PduKind::Response, 0, 0)]);
}

#[test]
fn max_burst_length_splits_a_large_write_into_several_r2ts() {
    let p = SessionParams { immediate_data: false, ..SessionParams::default() };
    // 1 MiB, no immediate data: 1048576 / 262144 = 4 R2Ts of 262144, 4 · 32 = 128 Data-Out.
    let plan = plan_write(1 << 20, &p);
    let r2ts: Vec<(u64, u64)> = plan.iter().filter(|x| x.kind == PduKind::R2t).map(|x| (x.offset, x.solicited)).collect();
    assert_eq!(r2ts, vec![(0, 262_144), (262_144, 262_144), (524_288, 262_144), (786_432, 262_144)]);
    assert_eq!(plan.iter().filter(|x| x.kind == PduKind::DataOut).count(), 128);
    // With 8192 bytes immediate the bursts start at 8192: three of 262144, then
    // 1048576 − 8192 − 3·262144 = 253952; Data-Out 32 + 32 + 32 + 31 = 127.
    let plan = plan_write(1 << 20, &SessionParams::default());
    let r2ts: Vec<(u64, u64)> = plan.iter().filter(|x| x.kind == PduKind::R2t).map(|x| (x.offset, x.solicited)).collect();
    assert_eq!(r2ts, vec![(8192, 262_144), (270_336, 262_144), (532_480, 262_144), (794_624, 253_952)]);
    assert_eq!(plan.iter().filter(|x| x.kind == PduKind::DataOut).count(), 127);
}

#[test]
fn every_pdu_round_trips_through_its_record() {
    let pdus = [
        Pdu::Command { tag: 7, write: true, lba: u32::MAX, bytes: 262_144 },
        Pdu::Command { tag: 8, write: false, lba: 0, bytes: 1 },
        Pdu::DataOut { tag: 7, offset: 8192, bytes: 8192, last: true },
        Pdu::DataOut { tag: 7, offset: 0, bytes: 4, last: false },
        Pdu::DataIn { tag: 8, offset: 16_384, bytes: 8192 },
        Pdu::DataInStatus { tag: 8, offset: 24_576, max_cmd_sn: u32::MAX },
        Pdu::R2t { tag: 7, offset: 65_536, bytes: 196_608 },
        Pdu::Response { tag: 7, exp_cmd_sn: 3, max_cmd_sn: 34 },
    ];
    for pdu in pdus {
        assert_eq!(Pdu::from_record(pdu.record()), Ok(pdu));
    }
    assert_eq!(Pdu::DataInStatus { tag: 1, offset: 0, max_cmd_sn: 0 }.record().kind, OP_DATA_IN | KIND_FLAG, "the S bit");
    assert!(Pdu::from_record(Record { kind: 0x3f, tag: 0, arg: 0 }).unwrap_err().contains("0x3f"));
}

#[test]
fn out_of_range_parameters_are_refused_naming_the_field() {
    let d = SessionParams::default();
    assert_eq!(d.validate(), Ok(()));
    let e = SessionParams { max_recv_data_segment_length_initiator: 100, ..d }.validate().unwrap_err();
    assert_eq!(e, "max_recv_data_segment_length_initiator: 100 is out of RFC 3720's range 512..=16777215 (§12.12)");
    let e = SessionParams::with_mrdsl(1 << 24).validate().unwrap_err();
    assert!(e.starts_with("max_recv_data_segment_length_initiator: 16777216 is out of"), "{e}");
    let e = SessionParams { max_recv_data_segment_length_target: 511, ..d }.validate().unwrap_err();
    assert!(e.starts_with("max_recv_data_segment_length_target: 511 "), "{e}");
    let e = SessionParams { max_burst_length: 1 << 24, ..d }.validate().unwrap_err();
    assert!(e.starts_with("max_burst_length: 16777216 is out of RFC 3720's range 512..=16777215"), "{e}");
    let e = SessionParams { first_burst_length: 0, ..d }.validate().unwrap_err();
    assert!(e.starts_with("first_burst_length: 0 is out of"), "{e}");
    let e = SessionParams { first_burst_length: 300_000, ..d }.validate().unwrap_err();
    assert!(e.starts_with("first_burst_length: 300000 exceeds max_burst_length 262144"), "{e}");
    let e = SessionParams { max_outstanding_r2t: 0, ..d }.validate().unwrap_err();
    assert!(e.starts_with("max_outstanding_r2t: 0 is out of RFC 3720's range 1..=65535"), "{e}");
    let e = SessionParams { max_outstanding_r2t: 65_536, ..d }.validate().unwrap_err();
    assert!(e.starts_with("max_outstanding_r2t: 65536 "), "{e}");
    let e = SessionParams { command_window: 0, ..d }.validate().unwrap_err();
    assert!(e.starts_with("command_window: 0 is out of range"), "{e}");
    assert!(Initiator::new(SessionParams { command_window: 0, ..d }).is_err());
    assert!(Target::new(SessionParams { max_burst_length: 100, ..d }).unwrap_err().starts_with("max_burst_length"));
    // Commands the 32-bit fields cannot carry, and a tag in use.
    let mut i = Initiator::new(d).unwrap();
    let c = Command { tag: 1, op: Op::Read, lba: 0, bytes: 4096 };
    assert!(i.submit(Command { bytes: 0, ..c }).unwrap_err().starts_with("bytes:"));
    assert!(i.submit(Command { bytes: 1 << 32, ..c }).unwrap_err().starts_with("bytes:"));
    assert!(i.submit(Command { lba: 1 << 32, ..c }).unwrap_err().starts_with("lba:"));
    assert_eq!(i.submit(c).unwrap().len(), 1);
    assert!(i.submit(c).unwrap_err().starts_with("tag: 1"));
}

/// The PDU of a `Send` action, with its wire bytes.
fn sent(a: &Action) -> (Pdu, u64) {
    match *a {
        Action::Send { bytes, record } => (Pdu::from_record(record).unwrap(), bytes),
        _ => panic!("{a:?} is not a Send"),
    }
}

#[test]
fn the_command_window_holds_the_next_command_until_a_status_arrives() {
    // Window 2: CmdSN 1 and 2 ≤ MaxCmdSN 1 + 2 − 1 = 2 go; CmdSN 3 waits.
    let p = SessionParams { command_window: 2, ..SessionParams::default() };
    let mut i = Initiator::new(p).unwrap();
    let mut t = Target::new(p).unwrap();
    let read = |tag| Command { tag, op: Op::Read, lba: 100 * u64::from(tag), bytes: 4096 };
    let mut commands = Vec::new();
    for tag in 1..=3 {
        commands.extend(i.submit(read(tag)).unwrap());
    }
    assert_eq!(commands.len(), 2);
    assert_eq!((i.outstanding(), i.waiting(), i.window_open(), i.next_cmd_sn()), (2, 1, false, 3));
    let mut backend = Vec::new();
    for a in &commands {
        let Action::Send { bytes, record } = *a else { unreachable!() };
        backend.extend(t.on_record(record, bytes).unwrap());
    }
    assert_eq!(backend, vec![Action::Read { tag: 1, lba: 100, bytes: 4096 }, Action::Read { tag: 2, lba: 200, bytes: 4096 }]);
    // The target would refuse a third command now: CmdSN 3 > MaxCmdSN 2.
    let extra = Pdu::Command { tag: 9, write: false, lba: 0, bytes: 4096 };
    assert!(t.clone().on_record(extra.record(), 48).unwrap_err().contains("beyond MaxCmdSN 2"));
    // Task 2's data (one 4096-byte Data-In with the status, MaxCmdSN now 3) reach the
    // initiator: it completes task 2 and issues command 3.
    let out = t.data_ready(2, 4096).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(sent(&out[0]), (Pdu::DataInStatus { tag: 2, offset: 0, max_cmd_sn: 3 }, 48 + 4096));
    let Action::Send { bytes, record } = out[0] else { unreachable!() };
    let out = i.on_record(record, bytes).unwrap();
    assert_eq!(out[0], Action::Complete { tag: 2, bytes: 4096 });
    assert_eq!(sent(&out[1]).0, Pdu::Command { tag: 3, write: false, lba: 300, bytes: 4096 });
    assert_eq!(out.len(), 2);
    assert_eq!((i.outstanding(), i.waiting(), i.window_open()), (2, 0, false));
}

/// The PDUs a task sent one way: (kind, offset, wire bytes), in order.
type Sent = Vec<(PduKind, u64, u64)>;

/// Both ends of a session and the records between them, delivered in batches of varying size;
/// the target's backend answers at once (a READ's data in two halves).
struct Exchange {
    ini: Initiator,
    tgt: Target,
    to_target: VecDeque<(Record, u64)>,
    to_initiator: VecDeque<(Record, u64)>,
    /// Every PDU sent, per direction: (kind, offset, wire bytes), with its tag.
    log: BTreeMap<u32, [Sent; 2]>,
    completed: Vec<(u32, u64)>,
    backend: Vec<Action>,
}

fn kind_of(pdu: Pdu) -> (PduKind, u64) {
    match pdu {
        Pdu::Command { .. } => (PduKind::Command, 0),
        Pdu::DataOut { offset, .. } => (PduKind::DataOut, u64::from(offset)),
        Pdu::DataIn { offset, .. } => (PduKind::DataIn, u64::from(offset)),
        Pdu::DataInStatus { offset, .. } => (PduKind::DataInStatus, u64::from(offset)),
        Pdu::R2t { offset, .. } => (PduKind::R2t, u64::from(offset)),
        Pdu::Response { .. } => (PduKind::Response, 0),
    }
}

impl Exchange {
    fn new(p: SessionParams) -> Self {
        Exchange {
            ini: Initiator::new(p).unwrap(),
            tgt: Target::new(p).unwrap(),
            to_target: VecDeque::new(),
            to_initiator: VecDeque::new(),
            log: BTreeMap::new(),
            completed: Vec::new(),
            backend: Vec::new(),
        }
    }

    fn take_initiator(&mut self, actions: Vec<Action>) {
        for a in actions {
            match a {
                Action::Send { bytes, record } => {
                    let (k, o) = kind_of(Pdu::from_record(record).unwrap());
                    self.log.entry(record.tag).or_default()[0].push((k, o, bytes));
                    self.to_target.push_back((record, bytes));
                }
                Action::Complete { tag, bytes } => self.completed.push((tag, bytes)),
                _ => panic!("{a:?} from the initiator"),
            }
        }
    }

    fn take_target(&mut self, actions: Vec<Action>) {
        let mut work: VecDeque<Action> = actions.into();
        while let Some(a) = work.pop_front() {
            match a {
                Action::Send { bytes, record } => {
                    let (k, o) = kind_of(Pdu::from_record(record).unwrap());
                    self.log.entry(record.tag).or_default()[1].push((k, o, bytes));
                    self.to_initiator.push_back((record, bytes));
                }
                Action::Read { tag, bytes, .. } => {
                    self.backend.push(a);
                    work.extend(self.tgt.data_ready(tag, bytes / 2).unwrap());
                    work.extend(self.tgt.data_ready(tag, bytes - bytes / 2).unwrap());
                }
                Action::Write { tag, bytes, .. } => {
                    self.backend.push(a);
                    work.extend(self.tgt.data_ready(tag, bytes).unwrap());
                }
                Action::Complete { .. } => panic!("{a:?} from the target"),
            }
        }
    }

    /// Submit every command, then deliver records until both directions are empty.
    fn run(&mut self, commands: &[Command]) {
        for &c in commands {
            let out = self.ini.submit(c).unwrap();
            self.take_initiator(out);
        }
        let mut step = 0;
        while !self.to_target.is_empty() || !self.to_initiator.is_empty() {
            for _ in 0..1 + step % 3 {
                let Some((r, b)) = self.to_target.pop_front() else { break };
                let out = self.tgt.on_record(r, b).unwrap();
                self.take_target(out);
            }
            for _ in 0..1 + (step + 1) % 4 {
                let Some((r, b)) = self.to_initiator.pop_front() else { break };
                let out = self.ini.on_record(r, b).unwrap();
                self.take_initiator(out);
            }
            assert!(self.ini.outstanding() <= self.ini.params().command_window as usize);
            step += 1;
        }
    }
}

fn commands() -> Vec<Command> {
    let sizes = [256 * KIB, 1001, 64 * KIB, 100_000, 4 * KIB, 300_000, 1, 1 << 20, 8 * KIB, 65_537];
    (0..sizes.len() as u32)
        .map(|tag| Command { tag: 10 + tag, op: if tag % 2 == 0 { Op::Read } else { Op::Write }, lba: 1000 * u64::from(tag), bytes: sizes[tag as usize] })
        .collect()
}

fn variants() -> Vec<SessionParams> {
    let d = SessionParams::default();
    vec![
        d,
        SessionParams { command_window: 1, phase_collapse: false, ..d },
        SessionParams { command_window: 3, initial_r2t: false, immediate_data: false, ..d },
        SessionParams {
            command_window: 4,
            initial_r2t: false,
            immediate_data: true,
            first_burst_length: 16_384,
            max_burst_length: 32_768,
            max_recv_data_segment_length_initiator: 12_288,
            max_recv_data_segment_length_target: 4096,
            max_outstanding_r2t: 2,
            header_digest: Digest::Crc32c,
            data_digest: Digest::Crc32c,
            phase_collapse: false,
        },
        SessionParams { max_outstanding_r2t: 3, max_burst_length: 65_536, first_burst_length: 512, ..SessionParams::with_mrdsl(65_536) },
    ]
}

#[test]
fn initiator_and_target_complete_every_task_with_the_planned_pdus() {
    for p in variants() {
        let cmds = commands();
        let mut x = Exchange::new(p);
        x.run(&cmds);
        // Every task completes once, with its bytes; nothing is left on either side.
        let mut done = x.completed.clone();
        done.sort();
        assert_eq!(done, cmds.iter().map(|c| (c.tag, c.bytes)).collect::<Vec<_>>(), "{p:?}");
        assert_eq!((x.ini.outstanding(), x.ini.waiting(), x.tgt.outstanding()), (0, 0, 0));
        // The backend saw each command once, with its LBA and length.
        let mut backend = x.backend.clone();
        backend.sort_by_key(|a| match *a {
            Action::Read { tag, .. } | Action::Write { tag, .. } => tag,
            _ => unreachable!(),
        });
        let want: Vec<Action> = cmds
            .iter()
            .map(|c| match c.op {
                Op::Read => Action::Read { tag: c.tag, lba: c.lba, bytes: c.bytes },
                Op::Write => Action::Write { tag: c.tag, lba: c.lba, bytes: c.bytes },
            })
            .collect();
        assert_eq!(backend, want);
        // Each task's PDUs, per direction, are its plan's (kind, offset, wire bytes), in order.
        for c in &cmds {
            let plan = match c.op {
                Op::Read => plan_read(c.bytes, &p),
                Op::Write => plan_write(c.bytes, &p),
            };
            for (i, d) in [Direction::ToTarget, Direction::ToInitiator].into_iter().enumerate() {
                let want: Vec<(PduKind, u64, u64)> = plan.iter().filter(|x| x.direction == d).map(|x| (x.kind, x.offset, x.wire)).collect();
                assert_eq!(x.log[&c.tag][i], want, "task {} {:?} {d:?} {p:?}", c.tag, c.op);
            }
        }
    }
}

#[test]
fn a_read_is_sent_as_its_data_become_ready() {
    // 20000 bytes at MRDSL 8192: Data-In 8192, 8192, 3616. The backend has 10000 ready: one
    // whole PDU goes; at 16384 the second; the rest brings the last with the status.
    let p = SessionParams::default();
    let mut t = Target::new(p).unwrap();
    let cmd = Pdu::Command { tag: 5, write: false, lba: 77, bytes: 20_000 };
    assert_eq!(t.on_record(cmd.record(), 48).unwrap(), vec![Action::Read { tag: 5, lba: 77, bytes: 20_000 }]);
    let out = t.data_ready(5, 10_000).unwrap();
    assert_eq!(out.iter().map(sent).collect::<Vec<_>>(), vec![(Pdu::DataIn { tag: 5, offset: 0, bytes: 8192 }, 8240)]);
    let out = t.data_ready(5, 6384).unwrap();
    assert_eq!(out.iter().map(sent).collect::<Vec<_>>(), vec![(Pdu::DataIn { tag: 5, offset: 8192, bytes: 8192 }, 8240)]);
    let out = t.data_ready(5, 3616).unwrap();
    // MaxCmdSN: one status sent, so 1 + 1 + 32 − 1 = 33.
    assert_eq!(out.iter().map(sent).collect::<Vec<_>>(), vec![(Pdu::DataInStatus { tag: 5, offset: 16_384, max_cmd_sn: 33 }, 48 + 3616)]);
    assert_eq!(t.outstanding(), 0);
    assert!(t.data_ready(5, 1).is_err(), "the task is complete");
}

#[test]
fn a_target_keeps_max_outstanding_r2t_bursts_in_flight() {
    // WRITE of 4 × 65536 with no immediate data, MaxBurstLength 65536, MaxOutstandingR2T 2:
    // the command brings R2Ts at 0 and 65536; the first burst's last Data-Out brings the third.
    let p = SessionParams { immediate_data: false, max_burst_length: 65_536, max_outstanding_r2t: 2, ..SessionParams::with_mrdsl(65_536) };
    let mut t = Target::new(p).unwrap();
    let cmd = Pdu::Command { tag: 1, write: true, lba: 0, bytes: 262_144 };
    let out = t.on_record(cmd.record(), 48).unwrap();
    assert_eq!(out.iter().map(|a| sent(a).0).collect::<Vec<_>>(), vec![Pdu::R2t { tag: 1, offset: 0, bytes: 65_536 }, Pdu::R2t { tag: 1, offset: 65_536, bytes: 65_536 }]);
    let half = Pdu::DataOut { tag: 1, offset: 0, bytes: 32_768, last: false };
    assert_eq!(t.on_record(half.record(), 48 + 32_768).unwrap(), vec![], "half a burst: nothing yet");
    let rest = Pdu::DataOut { tag: 1, offset: 32_768, bytes: 32_768, last: true };
    let out = t.on_record(rest.record(), 48 + 32_768).unwrap();
    assert_eq!(out.iter().map(|a| sent(a).0).collect::<Vec<_>>(), vec![Pdu::R2t { tag: 1, offset: 131_072, bytes: 65_536 }]);
    let wrong = Pdu::DataOut { tag: 1, offset: 131_072, bytes: 65_536, last: true };
    assert!(t.on_record(wrong.record(), 48 + 65_536).unwrap_err().contains("received 65536 of 262144"), "data out of order");
}
