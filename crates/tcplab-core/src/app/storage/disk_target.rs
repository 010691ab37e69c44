//! A disk server as an iSCSI target (study 002): it serves one or more sessions from its
//! volume — its share of the striped file over its local disks (`volume`). A READ's Data-In
//! PDUs go out as the disks deliver the data in order; a WRITE's data, once all received
//! (after the R2Ts it solicits), go to the disks, and the status follows the last disk write.
//! The command window (`SessionParams::command_window`) bounds how many commands each
//! session keeps at the target, and so the data the target holds.
//!
//! MODEL: the target's memory is not bounded beyond the command window; its connections read
//! every byte on arrival (the PDUs are taken into the target's buffers), so TCP's receive
//! window never closes for a slow disk — the iSCSI window and R2Ts are the flow control.

use super::disk::Op;
use super::iscsi::{Action, SessionParams, Target};
use super::outbox::Outbox;
use super::volume::Volume;
use crate::app::{Notice, Socket, Sockets};

#[derive(Clone, Debug)]
struct Session {
    socket: Socket,
    target: Target,
    outbox: Outbox,
    closed: bool,
}

/// The target side of a disk server.
#[derive(Clone, Debug)]
pub struct DiskTarget {
    sessions: Vec<Session>,
    volume: Volume,
    sector_bytes: u64,
}

/// A task's key in the volume: the session's index and the task's tag.
fn key(session: usize, tag: u32) -> u64 {
    (session as u64) << 32 | tag as u64
}

impl DiskTarget {
    /// A target on `sockets` (the listening ends of its sessions) serving `volume`, whose
    /// commands address it in `sector_bytes` blocks.
    pub fn new(sockets: Vec<Socket>, params: SessionParams, volume: Volume, sector_bytes: u32) -> Result<Self, String> {
        let sessions =
            sockets.into_iter().map(|socket| Ok(Session { socket, target: Target::new(params)?, outbox: Outbox::default(), closed: false })).collect::<Result<_, String>>()?;
        Ok(DiskTarget { sessions, volume, sector_bytes: sector_bytes as u64 })
    }

    /// Handle a notice: take the PDUs that arrived, run the disks to now, send what is ready,
    /// close a session once its initiator has closed and nothing is left, and set the timer to
    /// the disks' next completion.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if let Notice::Socket(s) = notice {
            if let Some(i) = self.sessions.iter().position(|x| x.socket == s) {
                while let Some((record, bytes)) = io.next_record(s) {
                    let actions = self.sessions[i].target.on_record(record, bytes).unwrap_or_else(|e| panic!("iSCSI target on {s:?}: {e}"));
                    self.act(i, actions, io);
                }
            }
        }
        self.run_disks(io);
        for x in &mut self.sessions {
            x.outbox.flush(x.socket, io);
            if !x.closed && x.target.outstanding() == 0 && x.outbox.is_empty() && io.peer_closed(x.socket) {
                x.closed = true;
                io.close(x.socket);
            }
        }
        if let Some(t) = self.volume.next_event() {
            io.set_timer(t);
        }
    }

    /// Send session `i`'s PDUs and start its disk work.
    fn act(&mut self, i: usize, actions: Vec<Action>, io: &mut impl Sockets) {
        let x = &mut self.sessions[i];
        let now = io.now();
        for a in x.outbox.send(x.socket, actions, io) {
            match a {
                Action::Read { tag, lba, bytes } => self.volume.submit(now, key(i, tag), Op::Read, lba * self.sector_bytes, bytes),
                Action::Write { tag, lba, bytes } => self.volume.submit(now, key(i, tag), Op::Write, lba * self.sector_bytes, bytes),
                Action::Send { .. } | Action::Complete { .. } => unreachable!("a target sends and never completes tasks"),
            }
        }
    }

    /// Report every disk completion due by now to its session.
    fn run_disks(&mut self, io: &mut impl Sockets) {
        loop {
            let progress = self.volume.advance(io.now());
            if progress.is_empty() {
                break;
            }
            for p in progress {
                let (i, tag) = ((p.key >> 32) as usize, p.key as u32);
                let actions = self.sessions[i].target.data_ready(tag, p.bytes).unwrap_or_else(|e| panic!("iSCSI target: {e}"));
                self.act(i, actions, io);
            }
        }
    }
}
