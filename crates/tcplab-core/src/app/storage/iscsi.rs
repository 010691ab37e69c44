//! iSCSI over TCP (RFC 3720, as its draft 20 of January 2003 and the RFC of April 2004 have it;
//! `scenarios/p2_data_reservoir/EVIDENCE.md` §4), sans-I/O: session parameters with the RFC's ranges, the bytes a PDU
//! takes on the wire, the transfer plans of a SCSI READ and WRITE (which PDUs, of what sizes),
//! and the initiator and target state machines that exchange those PDUs as records
//! (`app::Record`). The machines return `Action`s (send a record, a task is complete, ask the
//! backend to read or write) and take the peer's records and the backend's progress as inputs,
//! so they are tested without sockets; the applications that wire them to `Sockets` and to the
//! disk model (`disk_server`, `file_server`) are separate.
//!
//! One session, one connection (MaxConnections = 1, §12.2), data in order (DataPDUInOrder and
//! DataSequenceInOrder = Yes, §12.18–12.19), ErrorRecoveryLevel 0 (§12.20): TCP delivers every
//! record whole and in order, so nothing is lost or reordered at this layer.
//!
//! A PDU on the wire (§10.2): a 48-byte Basic Header Segment, no Additional Header Segment (a
//! 6–16-byte CDB without bidirectional data needs none, §10.2.2), a 4-byte header digest when
//! HeaderDigest = CRC32C, the data segment padded to a multiple of 4 bytes (§10.2.3), and a
//! 4-byte data digest when DataDigest = CRC32C and the data segment is not empty (§10.2.1).
//!
//! A PDU as a record: `kind` is the RFC's opcode (§10.2.1.2) in its low 6 bits, with bit 7
//! carrying the one flag the model needs (a command's W bit, a Data-Out's F bit, a Data-In's S
//! bit); `tag` is the Initiator Task Tag; `arg` packs two of the BHS's 32-bit fields, high word
//! and low word, as `Pdu` documents per kind. The record's length is the PDU's wire bytes.
//!
//! Not modelled (MODEL): the login phase (the session starts in full feature phase with the
//! parameters given, already negotiated), text and task management, NOP-In/Out, SNACK, error
//! recovery and digest errors (nothing is corrupted), logout, immediate-delivery commands (I
//! bit), bidirectional commands, sense data and non-GOOD status, Target Transfer Tags (the
//! target matches Data-Out to its R2Ts by buffer offset), StatSN and DataSN (sequence numbers
//! the in-order connection makes redundant), and the CDB beyond READ(10)/WRITE(10)'s 32-bit LBA.

use std::collections::{BTreeMap, VecDeque};

use crate::app::Record;

/// Bytes of the Basic Header Segment, every PDU (§10.2.1).
pub const BHS_BYTES: u64 = 48;
/// Bytes of a CRC32C digest (§12.1).
pub const DIGEST_BYTES: u64 = 4;
/// The smallest MaxRecvDataSegmentLength, FirstBurstLength and MaxBurstLength (§12.12–12.14).
pub const MIN_LENGTH: u32 = 512;
/// The largest of them, 2^24 − 1 (§12.12–12.14).
pub const MAX_LENGTH: u32 = (1 << 24) - 1;
/// The largest MaxOutstandingR2T (§12.17).
pub const MAX_OUTSTANDING_R2T: u32 = 65_535;
/// The CmdSN of a session's first command. MODEL: login would set it; any value works.
pub const FIRST_CMD_SN: u32 = 1;

/// Opcode (§10.2.1.2) of the SCSI Command (§10.3), initiator to target.
pub const OP_SCSI_COMMAND: u8 = 0x01;
/// Opcode of the SCSI Data-Out (§10.7), initiator to target.
pub const OP_DATA_OUT: u8 = 0x05;
/// Opcode of the SCSI Response (§10.4), target to initiator.
pub const OP_SCSI_RESPONSE: u8 = 0x21;
/// Opcode of the SCSI Data-In (§10.7), target to initiator.
pub const OP_DATA_IN: u8 = 0x25;
/// Opcode of the Ready To Transfer (§10.8), target to initiator.
pub const OP_R2T: u8 = 0x31;
/// Bit 7 of a record's kind: the command's W bit (a WRITE), the Data-Out's F bit (last PDU of a
/// sequence), the Data-In's S bit (it carries the status: phase collapse, §10.7.3).
pub const KIND_FLAG: u8 = 0x80;

/// A digest setting (§12.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Digest {
    /// No digest (the RFC's default).
    #[default]
    None,
    /// CRC32C: 4 bytes.
    Crc32c,
}

impl Digest {
    /// Bytes it adds where it applies.
    pub fn bytes(self) -> u64 {
        match self {
            Digest::None => 0,
            Digest::Crc32c => DIGEST_BYTES,
        }
    }
}

/// The operational parameters of a session, as negotiated at login (§12), plus the target's
/// command window and its status rule. Lengths in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionParams {
    /// MaxRecvDataSegmentLength the initiator declared: the most data in one PDU the target
    /// sends it (Data-In). Default 8192, range 512..=2^24−1 (§12.12; EVIDENCE §4, mapped
    /// {8192, 65536, 262144}).
    pub max_recv_data_segment_length_initiator: u32,
    /// MaxRecvDataSegmentLength the target declared: the most data in one PDU the initiator
    /// sends it (immediate data, Data-Out). Default 8192, range 512..=2^24−1 (§12.12).
    pub max_recv_data_segment_length_target: u32,
    /// FirstBurstLength: the most unsolicited data (immediate data and unsolicited Data-Out)
    /// per command. Default 65536, range 512..=2^24−1, ≤ MaxBurstLength (§12.14).
    pub first_burst_length: u32,
    /// MaxBurstLength: the most data in one Data-In sequence or one solicited Data-Out burst.
    /// Default 262144, range 512..=2^24−1 (§12.13).
    pub max_burst_length: u32,
    /// ImmediateData: write data may ride in the command PDU. Default Yes (§12.11).
    pub immediate_data: bool,
    /// InitialR2T: Yes forbids unsolicited Data-Out (only immediate data precedes the first
    /// R2T). Default Yes (§12.10).
    pub initial_r2t: bool,
    /// HeaderDigest. Default None (§12.1).
    pub header_digest: Digest,
    /// DataDigest. Default None (§12.1).
    pub data_digest: Digest,
    /// MaxOutstandingR2T: R2Ts a target may have outstanding per task. Default 1, range
    /// 1..=65535 (§12.17).
    pub max_outstanding_r2t: u32,
    /// The command window the target grants, MaxCmdSN − ExpCmdSN + 1 with nothing outstanding
    /// (§3.2.2.1): the target lets this many commands be outstanding at once. Default 32, range
    /// 1..=2^31−1 (serial arithmetic, RFC 1982). ASSUMPTION(p2): the paper gives no value
    /// (EVIDENCE §4: mapped 1, 4, 16, 64); 32 is the queue depth the era's Linux targets are
    /// recalled to grant (iSCSI Enterprise Target's QueuedCommands) — not verified.
    pub command_window: u32,
    /// The target sends a READ's status in its last Data-In (the S bit, "phase collapse",
    /// §10.7.3) instead of a separate SCSI Response. Default true. ASSUMPTION(p2): the RFC
    /// allows either for GOOD status; the era's Linux targets are recalled to collapse — not
    /// verified; a separate Response costs one 48-byte PDU per READ.
    pub phase_collapse: bool,
}

impl Default for SessionParams {
    fn default() -> Self {
        SessionParams {
            max_recv_data_segment_length_initiator: 8192,
            max_recv_data_segment_length_target: 8192,
            first_burst_length: 65_536,
            max_burst_length: 262_144,
            immediate_data: true,
            initial_r2t: true,
            header_digest: Digest::None,
            data_digest: Digest::None,
            max_outstanding_r2t: 1,
            command_window: 32,
            phase_collapse: true,
        }
    }
}

impl SessionParams {
    /// The defaults with one MaxRecvDataSegmentLength for both directions (the scenario's one
    /// `max_recv_data_segment_length` key).
    pub fn with_mrdsl(bytes: u32) -> Self {
        SessionParams { max_recv_data_segment_length_initiator: bytes, max_recv_data_segment_length_target: bytes, ..Self::default() }
    }

    /// Check every value against RFC 3720's range; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let lengths = [
            ("max_recv_data_segment_length_initiator", self.max_recv_data_segment_length_initiator, "§12.12"),
            ("max_recv_data_segment_length_target", self.max_recv_data_segment_length_target, "§12.12"),
            ("first_burst_length", self.first_burst_length, "§12.14"),
            ("max_burst_length", self.max_burst_length, "§12.13"),
        ];
        for (name, v, sec) in lengths {
            if !(MIN_LENGTH..=MAX_LENGTH).contains(&v) {
                return Err(format!("{name}: {v} is out of RFC 3720's range {MIN_LENGTH}..={MAX_LENGTH} ({sec})"));
            }
        }
        if self.first_burst_length > self.max_burst_length {
            return Err(format!(
                "first_burst_length: {} exceeds max_burst_length {} (RFC 3720 §12.14: FirstBurstLength MUST NOT exceed MaxBurstLength)",
                self.first_burst_length, self.max_burst_length
            ));
        }
        if !(1..=MAX_OUTSTANDING_R2T).contains(&self.max_outstanding_r2t) {
            return Err(format!("max_outstanding_r2t: {} is out of RFC 3720's range 1..={MAX_OUTSTANDING_R2T} (§12.17)", self.max_outstanding_r2t));
        }
        if !(1..=i32::MAX as u32).contains(&self.command_window) {
            return Err(format!("command_window: {} is out of range 1..={} (CmdSN serial arithmetic, RFC 3720 §3.2.2.1)", self.command_window, i32::MAX));
        }
        Ok(())
    }

    /// Bytes on the wire of a PDU with `data` bytes in its data segment: the BHS, the header
    /// digest, the data padded to a multiple of 4, the data digest if there is data (§10.2).
    pub fn pdu_wire_bytes(&self, data: u64) -> u64 {
        let data_part = if data == 0 { 0 } else { data.next_multiple_of(4) + self.data_digest.bytes() };
        BHS_BYTES + self.header_digest.bytes() + data_part
    }

    /// Header bytes of one PDU (the BHS and the header digest).
    pub fn header_bytes(&self) -> u64 {
        BHS_BYTES + self.header_digest.bytes()
    }

    /// Immediate data a WRITE of `bytes` carries in its command PDU: with ImmediateData,
    /// min(bytes, FirstBurstLength, the target's MaxRecvDataSegmentLength) (§12.11, §10.3).
    pub fn immediate_bytes(&self, bytes: u64) -> u64 {
        if self.immediate_data {
            bytes.min(u64::from(self.first_burst_length)).min(u64::from(self.max_recv_data_segment_length_target))
        } else {
            0
        }
    }

    /// Unsolicited data of a WRITE of `bytes` (immediate data included): with InitialR2T = No,
    /// min(bytes, FirstBurstLength) (§12.14), otherwise only the immediate data (§12.10).
    pub fn unsolicited_bytes(&self, bytes: u64) -> u64 {
        if self.initial_r2t {
            self.immediate_bytes(bytes)
        } else {
            bytes.min(u64::from(self.first_burst_length))
        }
    }

    /// Data bytes of the Data-In PDU that starts at `offset` of a READ of `bytes`: up to the
    /// initiator's MaxRecvDataSegmentLength, ending at the latest where its Data-In sequence
    /// ends (sequences of MaxBurstLength from offset 0, §12.13).
    pub fn data_in_bytes(&self, bytes: u64, offset: u64) -> u64 {
        let burst = u64::from(self.max_burst_length);
        let sequence_end = bytes.min((offset / burst + 1) * burst);
        (sequence_end - offset).min(u64::from(self.max_recv_data_segment_length_initiator))
    }

    /// The R2T that solicits data from `offset` of a WRITE of `bytes`: its desired length,
    /// up to MaxBurstLength (§10.8.4, §12.13).
    pub fn r2t_bytes(&self, bytes: u64, offset: u64) -> u64 {
        (bytes - offset).min(u64::from(self.max_burst_length))
    }
}

/// A PDU as the state machines exchange it, with the BHS fields the model keeps; `record`
/// and `from_record` map it to and from a `Record` (`arg` = high word << 32 | low word).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pdu {
    /// SCSI Command (§10.3): READ(10) or WRITE(10). arg: LBA (the CDB's 32 bits) | Expected
    /// Data Transfer Length. Its CmdSN is implicit: commands arrive in order on the session's
    /// one connection, so the target numbers them itself.
    Command { tag: u32, write: bool, lba: u32, bytes: u32 },
    /// SCSI Data-Out (§10.7): arg: DataSegmentLength | Buffer Offset; `last`: the F bit.
    DataOut { tag: u32, offset: u32, bytes: u32, last: bool },
    /// SCSI Data-In without status (§10.7): arg: DataSegmentLength | Buffer Offset.
    DataIn { tag: u32, offset: u32, bytes: u32 },
    /// The last Data-In of a READ with the S bit (§10.7.3): arg: MaxCmdSN | Buffer Offset (its
    /// length is the rest of the READ).
    DataInStatus { tag: u32, offset: u32, max_cmd_sn: u32 },
    /// R2T (§10.8): arg: Desired Data Transfer Length | Buffer Offset.
    R2t { tag: u32, offset: u32, bytes: u32 },
    /// SCSI Response, GOOD (§10.4): arg: MaxCmdSN | ExpCmdSN.
    Response { tag: u32, exp_cmd_sn: u32, max_cmd_sn: u32 },
}

fn pack(high: u32, low: u32) -> u64 {
    u64::from(high) << 32 | u64::from(low)
}

impl Pdu {
    /// The record that carries it.
    pub fn record(&self) -> Record {
        let (kind, tag, arg) = match *self {
            Pdu::Command { tag, write, lba, bytes } => (OP_SCSI_COMMAND | if write { KIND_FLAG } else { 0 }, tag, pack(lba, bytes)),
            Pdu::DataOut { tag, offset, bytes, last } => (OP_DATA_OUT | if last { KIND_FLAG } else { 0 }, tag, pack(bytes, offset)),
            Pdu::DataIn { tag, offset, bytes } => (OP_DATA_IN, tag, pack(bytes, offset)),
            Pdu::DataInStatus { tag, offset, max_cmd_sn } => (OP_DATA_IN | KIND_FLAG, tag, pack(max_cmd_sn, offset)),
            Pdu::R2t { tag, offset, bytes } => (OP_R2T, tag, pack(bytes, offset)),
            Pdu::Response { tag, exp_cmd_sn, max_cmd_sn } => (OP_SCSI_RESPONSE, tag, pack(max_cmd_sn, exp_cmd_sn)),
        };
        Record { kind, tag, arg }
    }

    /// The PDU a record carries; an error for a kind the model does not know.
    pub fn from_record(r: Record) -> Result<Pdu, String> {
        let (high, low, flag, tag) = ((r.arg >> 32) as u32, r.arg as u32, r.kind & KIND_FLAG != 0, r.tag);
        Ok(match r.kind & !KIND_FLAG {
            OP_SCSI_COMMAND => Pdu::Command { tag, write: flag, lba: high, bytes: low },
            OP_DATA_OUT => Pdu::DataOut { tag, offset: low, bytes: high, last: flag },
            OP_DATA_IN if flag => Pdu::DataInStatus { tag, offset: low, max_cmd_sn: high },
            OP_DATA_IN => Pdu::DataIn { tag, offset: low, bytes: high },
            OP_R2T => Pdu::R2t { tag, offset: low, bytes: high },
            OP_SCSI_RESPONSE => Pdu::Response { tag, exp_cmd_sn: low, max_cmd_sn: high },
            _ => return Err(format!("record kind {:#04x}: not an iSCSI PDU the model knows", r.kind)),
        })
    }
}

/// Which way a PDU travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Initiator to target (Command, Data-Out).
    ToTarget,
    /// Target to initiator (Data-In, R2T, Response).
    ToInitiator,
}

/// A PDU's kind in a transfer plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PduKind {
    /// SCSI Command (with immediate data, if any).
    Command,
    /// Data-Out, unsolicited or solicited.
    DataOut,
    /// R2T.
    R2t,
    /// Data-In without status.
    DataIn,
    /// The last Data-In, carrying the status (phase collapse).
    DataInStatus,
    /// SCSI Response.
    Response,
}

/// One PDU of a transfer plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedPdu {
    /// Which way it travels.
    pub direction: Direction,
    /// What it is.
    pub kind: PduKind,
    /// Buffer offset of the data it carries (or, an R2T, solicits), bytes.
    pub offset: u64,
    /// Data bytes it carries (its data segment before padding); 0 for an R2T or a Response.
    pub data: u64,
    /// Data bytes an R2T solicits (its Desired Data Transfer Length); 0 for the others.
    pub solicited: u64,
    /// Bytes on the wire.
    pub wire: u64,
}

/// Sums over a plan (or one direction of it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// PDUs.
    pub pdus: u64,
    /// SCSI data bytes (payload).
    pub payload: u64,
    /// Header bytes: BHS and header digest of every PDU.
    pub header: u64,
    /// Bytes on the wire: header, payload, padding and data digests.
    pub wire: u64,
}

impl Totals {
    /// The sums over the PDUs of `plan` that travel `direction` (all when `None`).
    pub fn of(plan: &[PlannedPdu], direction: Option<Direction>, params: &SessionParams) -> Totals {
        let mut t = Totals::default();
        for p in plan.iter().filter(|p| direction.is_none_or(|d| p.direction == d)) {
            t.pdus += 1;
            t.payload += p.data;
            t.header += params.header_bytes();
            t.wire += p.wire;
        }
        t
    }

    /// Wire bytes that are not payload (headers, padding, digests).
    pub fn overhead(&self) -> u64 {
        self.wire - self.payload
    }

    /// Payload per wire byte: what a rate "without headers" is of a rate "with headers".
    pub fn efficiency(&self) -> f64 {
        if self.wire == 0 {
            return 0.0;
        }
        self.payload as f64 / self.wire as f64
    }
}

/// The split of `[start, end)` into pieces of at most `max` bytes.
fn pieces(start: u64, end: u64, max: u64) -> impl Iterator<Item = (u64, u64)> {
    (start..end).step_by(max as usize).map(move |o| (o, max.min(end - o)))
}

/// The PDUs of a SCSI READ of `bytes` (> 0): the command; Data-In PDUs of at most the
/// initiator's MaxRecvDataSegmentLength, in sequences of at most MaxBurstLength; the status in
/// the last Data-In (`phase_collapse`) or in a SCSI Response after it (§10.7, §10.4).
pub fn plan_read(bytes: u64, params: &SessionParams) -> Vec<PlannedPdu> {
    let pdu = |direction, kind, offset, data| PlannedPdu { direction, kind, offset, data, solicited: 0, wire: params.pdu_wire_bytes(data) };
    let mut plan = vec![pdu(Direction::ToTarget, PduKind::Command, 0, 0)];
    let mut offset = 0;
    while offset < bytes {
        let data = params.data_in_bytes(bytes, offset);
        let last = offset + data == bytes;
        let kind = if last && params.phase_collapse { PduKind::DataInStatus } else { PduKind::DataIn };
        plan.push(pdu(Direction::ToInitiator, kind, offset, data));
        offset += data;
    }
    if !params.phase_collapse {
        plan.push(pdu(Direction::ToInitiator, PduKind::Response, 0, 0));
    }
    plan
}

/// The PDUs of a SCSI WRITE of `bytes` (> 0): the command with its immediate data; the
/// unsolicited Data-Out up to FirstBurstLength (InitialR2T = No); for the rest, R2Ts of at
/// most MaxBurstLength each followed by their Data-Out PDUs of at most the target's
/// MaxRecvDataSegmentLength; the SCSI Response (§10.3, §10.7, §10.8, §10.4). MODEL: listed
/// burst by burst; with MaxOutstandingR2T > 1 the target sends R2Ts ahead of the data, which
/// changes the order on the wire, not the PDUs.
pub fn plan_write(bytes: u64, params: &SessionParams) -> Vec<PlannedPdu> {
    let pdu = |direction, kind, offset, data| PlannedPdu { direction, kind, offset, data, solicited: 0, wire: params.pdu_wire_bytes(data) };
    let mrdsl = u64::from(params.max_recv_data_segment_length_target);
    let immediate = params.immediate_bytes(bytes);
    let unsolicited = params.unsolicited_bytes(bytes);
    let mut plan = vec![pdu(Direction::ToTarget, PduKind::Command, 0, immediate)];
    plan.extend(pieces(immediate, unsolicited, mrdsl).map(|(o, d)| pdu(Direction::ToTarget, PduKind::DataOut, o, d)));
    let mut offset = unsolicited;
    while offset < bytes {
        let burst = params.r2t_bytes(bytes, offset);
        plan.push(PlannedPdu { solicited: burst, ..pdu(Direction::ToInitiator, PduKind::R2t, offset, 0) });
        plan.extend(pieces(offset, offset + burst, mrdsl).map(|(o, d)| pdu(Direction::ToTarget, PduKind::DataOut, o, d)));
        offset += burst;
    }
    plan.push(pdu(Direction::ToInitiator, PduKind::Response, 0, 0));
    plan
}

/// What a state machine asks its application to do, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Write a record of `bytes` (the PDU's wire bytes) to the session's socket. Sends must be
    /// written in the order given (a full send buffer delays the rest, never reorders them).
    Send { bytes: u64, record: Record },
    /// Initiator: task `tag` is complete (its status arrived); `bytes` of data moved.
    Complete { tag: u32, bytes: u64 },
    /// Target: read `bytes` from `lba` for task `tag`; answer with `Target::data_ready` as the
    /// data become available.
    Read { tag: u32, lba: u64, bytes: u64 },
    /// Target: write `bytes` (all of the task's data, received) at `lba` for task `tag`; answer
    /// with `Target::data_ready` as they are written.
    Write { tag: u32, lba: u64, bytes: u64 },
}

fn send(params: &SessionParams, data: u64, pdu: Pdu) -> Action {
    Action::Send { bytes: params.pdu_wire_bytes(data), record: pdu.record() }
}

/// A SCSI operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// READ(10): data from target to initiator.
    Read,
    /// WRITE(10): data from initiator to target.
    Write,
}

/// A command an initiator is asked to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// Initiator Task Tag: unique among the initiator's tasks not yet complete.
    pub tag: u32,
    /// READ or WRITE.
    pub op: Op,
    /// First logical block (below 2^32: READ(10)/WRITE(10)).
    pub lba: u64,
    /// Expected Data Transfer Length, bytes: 1..=2^32−1 (a 32-bit field, §10.3.4).
    pub bytes: u64,
}

/// Serial-number order (RFC 1982, used for CmdSN by §3.2.2.1): `a` ≤ `b`.
fn sn_le(a: u32, b: u32) -> bool {
    b.wrapping_sub(a) as i32 >= 0
}

fn u32_of(v: u64, what: &str) -> Result<u32, String> {
    u32::try_from(v).map_err(|_| format!("{what}: {v} does not fit the 32-bit field"))
}

#[derive(Clone, Copy, Debug)]
struct InitiatorTask {
    op: Op,
    bytes: u64,
    /// Data bytes moved so far (READ: received; WRITE: sent).
    moved: u64,
}

/// The initiator side of a session: issues commands within the command window, answers R2Ts
/// with Data-Out, takes Data-In, completes a task on its status.
#[derive(Clone, Debug)]
pub struct Initiator {
    params: SessionParams,
    /// CmdSN of the next command issued.
    cmd_sn: u32,
    /// The highest MaxCmdSN the target has advertised.
    max_cmd_sn: u32,
    /// Commands submitted, not yet issued (the window was closed).
    waiting: VecDeque<Command>,
    /// Tasks issued, not complete, by tag.
    tasks: BTreeMap<u32, InitiatorTask>,
}

impl Initiator {
    /// An initiator in full feature phase: the window the target granted at login is
    /// `command_window` from `FIRST_CMD_SN`.
    pub fn new(params: SessionParams) -> Result<Self, String> {
        params.validate()?;
        Ok(Initiator { params, cmd_sn: FIRST_CMD_SN, max_cmd_sn: max_cmd_sn(0, params.command_window), waiting: VecDeque::new(), tasks: BTreeMap::new() })
    }

    /// The session parameters.
    pub fn params(&self) -> &SessionParams {
        &self.params
    }

    /// Tasks issued and not complete.
    pub fn outstanding(&self) -> usize {
        self.tasks.len()
    }

    /// Commands submitted and waiting for the window to open.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// True when the window lets one more command be issued now (CmdSN ≤ MaxCmdSN).
    pub fn window_open(&self) -> bool {
        sn_le(self.cmd_sn, self.max_cmd_sn)
    }

    /// CmdSN the next command will carry.
    pub fn next_cmd_sn(&self) -> u32 {
        self.cmd_sn
    }

    /// Submit a command: issued at once if the window is open, else when a status opens it
    /// (commands issue in the order submitted). Errors: a tag in use, a length of 0 or above
    /// 2^32−1, an LBA at or above 2^32.
    pub fn submit(&mut self, command: Command) -> Result<Vec<Action>, String> {
        if command.bytes == 0 {
            return Err(format!("bytes: task {} moves no data (the model has no zero-length commands)", command.tag));
        }
        u32_of(command.bytes, "bytes")?;
        u32_of(command.lba, "lba")?;
        if self.tasks.contains_key(&command.tag) || self.waiting.iter().any(|c| c.tag == command.tag) {
            return Err(format!("tag: {} is already in use by a task not complete", command.tag));
        }
        self.waiting.push_back(command);
        let mut out = Vec::new();
        self.issue(&mut out);
        Ok(out)
    }

    /// Issue waiting commands while the window is open: the command PDU with its immediate
    /// data, then a WRITE's unsolicited Data-Out (§10.3, §10.7).
    fn issue(&mut self, out: &mut Vec<Action>) {
        while self.window_open() {
            let Some(c) = self.waiting.pop_front() else { break };
            let p = self.params;
            let (write, immediate) = match c.op {
                Op::Read => (false, 0),
                Op::Write => (true, p.immediate_bytes(c.bytes)),
            };
            out.push(send(&p, immediate, Pdu::Command { tag: c.tag, write, lba: c.lba as u32, bytes: c.bytes as u32 }));
            let mut moved = immediate;
            if write {
                let end = p.unsolicited_bytes(c.bytes);
                self.data_out(c.tag, immediate, end, out);
                moved = end;
            }
            self.tasks.insert(c.tag, InitiatorTask { op: c.op, bytes: c.bytes, moved });
            self.cmd_sn = self.cmd_sn.wrapping_add(1);
        }
    }

    /// Data-Out PDUs for `[start, end)`, each at most the target's MaxRecvDataSegmentLength,
    /// the F bit on the last.
    fn data_out(&self, tag: u32, start: u64, end: u64, out: &mut Vec<Action>) {
        for (o, d) in pieces(start, end, u64::from(self.params.max_recv_data_segment_length_target)) {
            out.push(send(&self.params, d, Pdu::DataOut { tag, offset: o as u32, bytes: d as u32, last: o + d == end }));
        }
    }

    /// Take one record from the target (`bytes`: its length on the wire). Errors: a record the
    /// protocol does not allow here (a broken peer).
    pub fn on_record(&mut self, record: Record, bytes: u64) -> Result<Vec<Action>, String> {
        let pdu = Pdu::from_record(record)?;
        let p = self.params;
        let mut out = Vec::new();
        let tag = record.tag;
        let task = *self.tasks.get(&tag).ok_or_else(|| format!("{pdu:?}: no task {tag} outstanding"))?;
        let (expect_op, data, status) = match pdu {
            Pdu::R2t { offset, bytes: want, .. } => {
                let (o, n) = (u64::from(offset), u64::from(want));
                if o != task.moved || o + n > task.bytes || n > u64::from(p.max_burst_length) {
                    return Err(format!("{pdu:?}: task {tag} has sent {} of {} bytes", task.moved, task.bytes));
                }
                self.data_out(tag, o, o + n, &mut out);
                self.tasks.get_mut(&tag).expect("looked up above").moved = o + n;
                (Op::Write, 0, None)
            }
            Pdu::DataIn { offset, bytes: d, .. } => (Op::Read, self.take_data(tag, &task, offset, u64::from(d))?, None),
            Pdu::DataInStatus { offset, max_cmd_sn, .. } => (Op::Read, self.take_data(tag, &task, offset, task.bytes.saturating_sub(u64::from(offset)))?, Some(max_cmd_sn)),
            Pdu::Response { max_cmd_sn, .. } => (task.op, 0, Some(max_cmd_sn)),
            Pdu::Command { .. } | Pdu::DataOut { .. } => return Err(format!("{pdu:?}: an initiator's PDU arrived at the initiator")),
        };
        if expect_op != task.op {
            return Err(format!("{pdu:?}: task {tag} is a {:?}", task.op));
        }
        check_wire(&p, &pdu, bytes, data)?;
        if let Some(max_cmd_sn) = status {
            let task = self.tasks.remove(&tag).expect("looked up above");
            if task.moved != task.bytes {
                return Err(format!("{pdu:?}: status with {} of {} bytes moved", task.moved, task.bytes));
            }
            out.push(Action::Complete { tag, bytes: task.bytes });
            if sn_le(self.max_cmd_sn, max_cmd_sn) {
                self.max_cmd_sn = max_cmd_sn;
            }
            self.issue(&mut out);
        }
        Ok(out)
    }

    /// Account a Data-In's `data` bytes at `offset` (in order: DataPDUInOrder = Yes).
    fn take_data(&mut self, tag: u32, task: &InitiatorTask, offset: u32, data: u64) -> Result<u64, String> {
        let o = u64::from(offset);
        if o != task.moved || data == 0 || o + data > task.bytes || data > u64::from(self.params.max_recv_data_segment_length_initiator) {
            return Err(format!("Data-In of task {tag} at {o} ({data} bytes): {} of {} bytes received", task.moved, task.bytes));
        }
        self.tasks.get_mut(&tag).expect("looked up by the caller").moved = o + data;
        Ok(data)
    }
}

/// A task at the target. READ: `ready` bytes the backend has read, `sent` bytes sent in
/// Data-In. WRITE: `received` data bytes (immediate, unsolicited, solicited, in order),
/// `solicit` the offset the next R2T asks from, `r2ts` the end offsets of the R2Ts outstanding
/// (oldest first), `written` bytes the backend has written.
#[derive(Clone, Debug)]
enum TargetTask {
    Read { bytes: u64, ready: u64, sent: u64 },
    Write { lba: u64, bytes: u64, received: u64, solicit: u64, r2ts: VecDeque<u64>, written: u64 },
}

/// The target side of a session: takes commands, asks its backend to read or write, sends
/// Data-In, R2Ts and the status.
#[derive(Clone, Debug)]
pub struct Target {
    params: SessionParams,
    /// CmdSN of the next command expected.
    exp_cmd_sn: u32,
    /// Tasks whose status has been sent.
    completed: u32,
    tasks: BTreeMap<u32, TargetTask>,
}

impl Target {
    /// A target in full feature phase, expecting CmdSN `FIRST_CMD_SN`.
    pub fn new(params: SessionParams) -> Result<Self, String> {
        params.validate()?;
        Ok(Target { params, exp_cmd_sn: FIRST_CMD_SN, completed: 0, tasks: BTreeMap::new() })
    }

    /// Tasks received and not complete.
    pub fn outstanding(&self) -> usize {
        self.tasks.len()
    }

    /// MaxCmdSN it advertises: `command_window` commands past those whose status it has sent.
    /// MODEL: the target's queue is the window; it opens one slot per status sent.
    pub fn max_cmd_sn(&self) -> u32 {
        max_cmd_sn(self.completed, self.params.command_window)
    }

    /// Take one record from the initiator (`bytes`: its length on the wire). Errors: a record
    /// the protocol does not allow here (a broken peer), a command beyond MaxCmdSN.
    pub fn on_record(&mut self, record: Record, bytes: u64) -> Result<Vec<Action>, String> {
        let pdu = Pdu::from_record(record)?;
        let p = self.params;
        let tag = record.tag;
        let mut out = Vec::new();
        match pdu {
            Pdu::Command { write, lba, bytes: n, .. } => {
                let (lba, n) = (u64::from(lba), u64::from(n));
                if !sn_le(self.exp_cmd_sn, self.max_cmd_sn()) {
                    return Err(format!("{pdu:?}: CmdSN {} is beyond MaxCmdSN {}", self.exp_cmd_sn, self.max_cmd_sn()));
                }
                if n == 0 || self.tasks.contains_key(&tag) {
                    return Err(format!("{pdu:?}: no data, or tag {tag} in use"));
                }
                let immediate = if write { p.immediate_bytes(n) } else { 0 };
                check_wire(&p, &pdu, bytes, immediate)?;
                self.exp_cmd_sn = self.exp_cmd_sn.wrapping_add(1);
                if write {
                    let unsolicited = p.unsolicited_bytes(n);
                    let task = TargetTask::Write { lba, bytes: n, received: immediate, solicit: unsolicited, r2ts: VecDeque::new(), written: 0 };
                    self.tasks.insert(tag, task);
                    self.progress_write(tag, &mut out);
                } else {
                    self.tasks.insert(tag, TargetTask::Read { bytes: n, ready: 0, sent: 0 });
                    out.push(Action::Read { tag, lba, bytes: n });
                }
            }
            Pdu::DataOut { offset, bytes: d, .. } => {
                let Some(TargetTask::Write { bytes: n, received, .. }) = self.tasks.get_mut(&tag) else {
                    return Err(format!("{pdu:?}: no WRITE task {tag}"));
                };
                let (o, d) = (u64::from(offset), u64::from(d));
                if o != *received || d == 0 || o + d > *n || d > u64::from(p.max_recv_data_segment_length_target) {
                    return Err(format!("{pdu:?}: task {tag} has received {received} of {n} bytes"));
                }
                check_wire(&p, &pdu, bytes, d)?;
                *received += d;
                self.progress_write(tag, &mut out);
            }
            _ => return Err(format!("{pdu:?}: a target's PDU arrived at the target")),
        }
        Ok(out)
    }

    /// A WRITE's next steps: retire the R2Ts whose data have all arrived, send R2Ts while
    /// fewer than MaxOutstandingR2T are outstanding (§12.17), and once every byte has arrived
    /// ask the backend to write them.
    fn progress_write(&mut self, tag: u32, out: &mut Vec<Action>) {
        let p = self.params;
        let Some(TargetTask::Write { lba, bytes, received, solicit, r2ts, .. }) = self.tasks.get_mut(&tag) else { unreachable!("called for a WRITE task") };
        while r2ts.front().is_some_and(|&end| end <= *received) {
            r2ts.pop_front();
        }
        while r2ts.len() < p.max_outstanding_r2t as usize && *solicit < *bytes {
            let want = p.r2t_bytes(*bytes, *solicit);
            out.push(send(&p, 0, Pdu::R2t { tag, offset: *solicit as u32, bytes: want as u32 }));
            *solicit += want;
            r2ts.push_back(*solicit);
        }
        if *received == *bytes && r2ts.is_empty() {
            out.push(Action::Write { tag, lba: *lba, bytes: *bytes });
        }
    }

    /// The backend has `bytes` more of task `tag` ready (a READ: read into the target's
    /// buffer; a WRITE: written): send the Data-In PDUs now whole, or the WRITE's status once
    /// all is written. Errors: an unknown task, more bytes than the task has, a WRITE's data
    /// written before they arrived.
    pub fn data_ready(&mut self, tag: u32, bytes: u64) -> Result<Vec<Action>, String> {
        let p = self.params;
        let mut out = Vec::new();
        let mut done = false;
        match self.tasks.get_mut(&tag) {
            Some(TargetTask::Read { bytes: n, ready, sent }) => {
                if *ready + bytes > *n {
                    return Err(format!("data_ready: task {tag} has {n} bytes, {} ready", *ready + bytes));
                }
                *ready += bytes;
                while *sent < *n {
                    let d = p.data_in_bytes(*n, *sent);
                    if *sent + d > *ready {
                        break;
                    }
                    let last = *sent + d == *n;
                    let offset = *sent as u32;
                    *sent += d;
                    if last && p.phase_collapse {
                        self.completed = self.completed.wrapping_add(1);
                        out.push(send(&p, d, Pdu::DataInStatus { tag, offset, max_cmd_sn: max_cmd_sn(self.completed, p.command_window) }));
                    } else {
                        out.push(send(&p, d, Pdu::DataIn { tag, offset, bytes: d as u32 }));
                    }
                    done = last;
                }
                if done && !p.phase_collapse {
                    self.completed = self.completed.wrapping_add(1);
                    out.push(send(&p, 0, Pdu::Response { tag, exp_cmd_sn: self.exp_cmd_sn, max_cmd_sn: self.max_cmd_sn() }));
                }
            }
            Some(TargetTask::Write { bytes: n, received, written, .. }) => {
                if *received < *n || *written + bytes > *n {
                    return Err(format!("data_ready: task {tag} has received {received} of {n} bytes, {} written", *written + bytes));
                }
                *written += bytes;
                if *written == *n {
                    done = true;
                    self.completed = self.completed.wrapping_add(1);
                    out.push(send(&p, 0, Pdu::Response { tag, exp_cmd_sn: self.exp_cmd_sn, max_cmd_sn: self.max_cmd_sn() }));
                }
            }
            None => return Err(format!("data_ready: no task {tag}")),
        }
        if done {
            self.tasks.remove(&tag);
        }
        Ok(out)
    }
}

/// MaxCmdSN after `completed` statuses with a window of `window` commands.
fn max_cmd_sn(completed: u32, window: u32) -> u32 {
    FIRST_CMD_SN.wrapping_add(completed).wrapping_add(window - 1)
}

/// Check a record's length against the PDU it should be with `data` bytes.
fn check_wire(params: &SessionParams, pdu: &Pdu, bytes: u64, data: u64) -> Result<(), String> {
    let want = params.pdu_wire_bytes(data);
    if bytes == want {
        Ok(())
    } else {
        Err(format!("{pdu:?}: {bytes} bytes on the wire, {want} expected"))
    }
}

#[cfg(test)]
#[path = "iscsi_tests.rs"]
mod tests;
