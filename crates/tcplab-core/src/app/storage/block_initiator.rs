//! The iSCSI initiator that moves a striped file's blocks (study 002), one session (one TCP
//! stream) per disk server it talks to, in one of the two access paths of the paper's §2:
//! - **local access** (`local: None`): a file server reads the file from the disk servers,
//!   READ commands of `block` bytes over each server's share, in order;
//! - **remote access** (`local: Some(volume)`): a source disk server reads each block of its
//!   own share from its local disks and WRITEs it to its peer at the destination, a pipeline
//!   (read from the disks, send, the peer writes to its disks).
//!
//! Each stream keeps at most `depth` blocks between their start (a READ issued, or a local
//! disk read begun) and their status. A stream is done, closed and its flow finished when the
//! status of its last block arrives; each completed command is a `Command` milestone.
//!
//! ASSUMPTION(p2): the paper does not say how far a disk server reads ahead of the network;
//! the pipeline holds as many blocks as the session's command window.

use super::disk::Op;
use super::iscsi::{self, Action, Command, Initiator, SessionParams};
use super::outbox::Outbox;
use super::volume::Volume;
use crate::app::{Milestone, Notice, Socket, Sockets};

#[derive(Clone, Debug)]
struct Stream {
    socket: Socket,
    session: Initiator,
    outbox: Outbox,
    /// Bytes of the share this stream moves.
    bytes: u64,
    /// Blocks started so far (the next block's index).
    started: u64,
    /// Blocks started and not complete.
    in_flight: u64,
    /// Bytes whose status has arrived.
    moved: u64,
    done: bool,
}

/// The initiator of a striped transfer.
#[derive(Clone, Debug)]
pub struct BlockInitiator {
    streams: Vec<Stream>,
    /// The initiator's own volume (remote access), read to feed its WRITEs.
    local: Option<Volume>,
    block: u64,
    depth: u64,
    sector_bytes: u64,
    open: bool,
}

impl BlockInitiator {
    /// An initiator with one stream per `(socket, bytes)` (its end of the connection, which it
    /// opens, and the bytes of the share it moves), commands of `block` bytes (a whole number
    /// of `sector_bytes` sectors). With `local`, it WRITEs the blocks of its own volume (which
    /// must hold the share of its one stream); without, it READs.
    pub fn new(streams: Vec<(Socket, u64)>, params: SessionParams, block: u64, sector_bytes: u32, local: Option<Volume>) -> Result<Self, String> {
        if block == 0 || !block.is_multiple_of(sector_bytes as u64) {
            return Err(format!("block: {block} bytes is not a whole number (≥ 1) of {sector_bytes}-byte sectors"));
        }
        if let Some(v) = &local {
            if streams.len() != 1 || streams[0].1 > v.bytes() {
                return Err("streams: a source disk server writes its own volume over one stream".into());
            }
        }
        let streams = streams
            .into_iter()
            .map(|(socket, bytes)| Ok(Stream { socket, session: Initiator::new(params)?, outbox: Outbox::default(), bytes, started: 0, in_flight: 0, moved: 0, done: false }))
            .collect::<Result<_, String>>()?;
        Ok(BlockInitiator { streams, local, block, depth: params.command_window as u64, sector_bytes: sector_bytes as u64, open: false })
    }

    /// Handle a notice: on start, open every session; once all are open, start the blocks;
    /// then take arriving PDUs, feed WRITEs from the local disks, and keep each stream's
    /// pipeline full until its share has moved.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        match notice {
            Notice::Start => {
                for x in &self.streams {
                    io.connect(x.socket);
                }
            }
            Notice::Socket(s) if self.open => {
                if let Some(i) = self.streams.iter().position(|x| x.socket == s) {
                    while let Some((record, bytes)) = io.next_record(s) {
                        let actions = self.streams[i].session.on_record(record, bytes).unwrap_or_else(|e| panic!("iSCSI initiator on {s:?}: {e}"));
                        self.act(i, actions, io);
                    }
                }
            }
            Notice::Socket(_) | Notice::Timer => {}
        }
        if !self.open && self.streams.iter().all(|x| io.established(x.socket)) {
            self.open = true;
        }
        if !self.open {
            return;
        }
        self.run_disks(io);
        for i in 0..self.streams.len() {
            self.fill(i, io);
            let x = &mut self.streams[i];
            x.outbox.flush(x.socket, io);
        }
        if let Some(t) = self.local.as_ref().and_then(Volume::next_event) {
            io.set_timer(t);
        }
    }

    /// Start blocks of stream `i` while its pipeline has room.
    fn fill(&mut self, i: usize, io: &mut impl Sockets) {
        loop {
            let x = &mut self.streams[i];
            let offset = x.started * self.block;
            if x.done || offset >= x.bytes || x.in_flight >= self.depth {
                break;
            }
            let bytes = self.block.min(x.bytes - offset);
            let tag = u32::try_from(x.started).expect("validated: fewer than 2^32 blocks per stream");
            x.started += 1;
            x.in_flight += 1;
            if let Some(v) = self.local.as_mut() {
                v.submit(io.now(), tag as u64, Op::Read, offset, bytes);
            } else {
                let actions = x.session.submit(Command { tag, op: iscsi::Op::Read, lba: offset / self.sector_bytes, bytes }).unwrap_or_else(|e| panic!("iSCSI initiator: {e}"));
                self.act(i, actions, io);
            }
        }
        let x = &mut self.streams[i];
        if !x.done && x.moved == x.bytes && x.in_flight == 0 {
            x.done = true;
            io.close(x.socket);
            io.finish_flow(x.socket);
        }
    }

    /// Send stream `i`'s PDUs and account its completed commands.
    fn act(&mut self, i: usize, actions: Vec<Action>, io: &mut impl Sockets) {
        let x = &mut self.streams[i];
        for a in x.outbox.send(x.socket, actions, io) {
            match a {
                Action::Complete { bytes, .. } => {
                    x.moved += bytes;
                    x.in_flight -= 1;
                    io.milestone(x.socket, Milestone::Command, bytes);
                }
                Action::Send { .. } | Action::Read { .. } | Action::Write { .. } => unreachable!("an initiator sends and completes"),
            }
        }
    }

    /// Issue the WRITE of every block the local disks have read by now.
    fn run_disks(&mut self, io: &mut impl Sockets) {
        loop {
            let Some(v) = &mut self.local else { return };
            let progress = v.advance(io.now());
            if progress.is_empty() {
                return;
            }
            for p in progress.into_iter().filter(|p| p.complete) {
                let tag = p.key as u32;
                let x = &mut self.streams[0];
                let offset = tag as u64 * self.block;
                let bytes = self.block.min(x.bytes - offset);
                let actions = x.session.submit(Command { tag, op: iscsi::Op::Write, lba: offset / self.sector_bytes, bytes }).unwrap_or_else(|e| panic!("iSCSI initiator: {e}"));
                self.act(0, actions, io);
            }
        }
    }
}
