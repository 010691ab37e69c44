//! The SCSI bus a host's disks share, and `DiskSet`: the disks of one host on one bus, as the
//! storage applications drive them (sans-I/O: `submit`, `next_event`, `advance`).
//!
//! MODEL (bus): one FIFO transfer stage at `rate × efficiency_percent / 100`; a transfer of `b`
//! bytes that reaches it at `t` ends at `max(t, previous end) + b / rate_eff`. A command's data
//! crosses it whole: a read's after the disk has read it (store and forward per command), a
//! write's before the command reaches the disk. The disk is free while its data waits for or
//! crosses the bus (SCSI disconnect/reconnect: it holds the bus only while it transfers), so a
//! disk's media work overlaps the bus transfers of its earlier commands. MODEL: the disk buffer
//! this needs is not bounded here; the host's command window bounds how far a disk runs ahead.
//! Defaults: Ultra160, 160 MB/s (EVIDENCE §2 "interface"), efficiency 85 % for arbitration,
//! selection and message phases (EVIDENCE §2 "The SCSI bus": an estimate, mapped 75–100 %).

use std::collections::VecDeque;

use super::disk::{Disk, DiskParams, Done, Op, Request};
use crate::units::{BitRate, SimTime};

/// The parameters of one SCSI bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BusParams {
    /// Raw bus rate. Default 160 MB/s = 1.28 Gb/s (Ultra160: 16 bits, double-edge, 6.25 ns;
    /// EVIDENCE §2 "interface").
    pub rate: BitRate,
    /// Share of the raw rate left for data, percent (1–100). Default 85 (EVIDENCE §2 "The SCSI
    /// bus": estimate, mapped 75–100).
    pub efficiency_percent: u32,
}

impl Default for BusParams {
    fn default() -> Self {
        BusParams { rate: BitRate(160_000_000 * 8), efficiency_percent: 85 }
    }
}

impl BusParams {
    /// Check the parameters; errors name the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.rate.bps() == 0 {
            return Err("rate: must be above 0".into());
        }
        if !(1..=100).contains(&self.efficiency_percent) {
            return Err(format!("efficiency_percent: {} is outside 1–100", self.efficiency_percent));
        }
        if self.effective().bps() == 0 {
            return Err("rate: the effective rate rounds to 0".into());
        }
        Ok(())
    }

    /// The rate data crosses at: `rate · efficiency_percent / 100`.
    pub fn effective(&self) -> BitRate {
        BitRate((self.rate.bps() as u128 * self.efficiency_percent as u128 / 100) as u64)
    }
}

/// A FIFO transfer stage carrying items of type `T`.
#[derive(Clone, Debug)]
pub struct ScsiBus<T> {
    rate: BitRate,
    free: SimTime,
    last_arrival: SimTime,
    pending: VecDeque<(SimTime, T)>,
}

impl<T> ScsiBus<T> {
    /// An idle bus.
    pub fn new(params: BusParams) -> Result<Self, String> {
        params.validate()?;
        Ok(ScsiBus { rate: params.effective(), free: SimTime::ZERO, last_arrival: SimTime::ZERO, pending: VecDeque::new() })
    }

    /// Queue `bytes` reaching the bus at `now` (non-decreasing across calls); returns when the
    /// transfer ends.
    pub fn submit(&mut self, now: SimTime, bytes: u64, item: T) -> SimTime {
        debug_assert!(now >= self.last_arrival, "bus arrivals in time order");
        self.last_arrival = now;
        let end = now.max(self.free) + self.rate.tx_time(bytes);
        self.free = end;
        self.pending.push_back((end, item));
        end
    }

    /// When the next transfer ends, if any is queued.
    pub fn next_completion(&self) -> Option<SimTime> {
        self.pending.front().map(|p| p.0)
    }

    /// The next transfer ended by `now`, with its end time.
    pub fn pop_due(&mut self, now: SimTime) -> Option<(SimTime, T)> {
        if self.pending.front().is_some_and(|p| p.0 <= now) {
            self.pending.pop_front()
        } else {
            None
        }
    }
}

/// What crosses a `DiskSet`'s bus.
#[derive(Clone, Copy, Debug)]
enum Transfer {
    /// A read's data, disk to host.
    ReadData { disk: usize, done: Done },
    /// A write's data, host to disk.
    WriteData { disk: usize, req: Request, submitted: SimTime },
}

/// The disks of one host on one shared bus. Reads: disk, then bus; writes: bus, then disk.
/// Each disk's queue is FIFO in arrival *at the disk*: a write arrives once its data has crossed
/// the bus, so a read submitted while an earlier write's data is still on the bus can reach the
/// disk first.
#[derive(Clone, Debug)]
pub struct DiskSet {
    disks: Vec<Disk>,
    bus: ScsiBus<Transfer>,
    /// Host submit times per disk, in disk-arrival order (to stamp `Done::submitted`).
    submitted: Vec<VecDeque<SimTime>>,
    /// Completions found while catching up inside `submit`, returned by the next `advance`.
    out: Vec<(usize, Done)>,
    now: SimTime,
}

impl DiskSet {
    /// `count` identical disks on one bus.
    pub fn new(count: usize, disk: DiskParams, bus: BusParams) -> Result<DiskSet, String> {
        if count == 0 {
            return Err("disks: must be at least 1".into());
        }
        let d = Disk::new(disk)?;
        Ok(DiskSet { disks: vec![d; count], bus: ScsiBus::new(bus)?, submitted: vec![VecDeque::new(); count], out: Vec::new(), now: SimTime::ZERO })
    }

    /// Set each disk's spindle phase from `draws` (one per disk, in order; see
    /// `Disk::set_rotation_phase`).
    pub fn set_rotation_phases(&mut self, mut draws: impl FnMut() -> u64) {
        for d in &mut self.disks {
            d.set_rotation_phase(draws());
        }
    }

    /// The disks.
    pub fn disks(&self) -> &[Disk] {
        &self.disks
    }

    /// Submit `req` to disk `disk` at `now` (non-decreasing across calls).
    pub fn submit(&mut self, now: SimTime, disk: usize, req: Request) {
        self.run_until(now);
        match req.op {
            Op::Read => {
                self.submitted[disk].push_back(now);
                self.disks[disk].submit(now, req);
            }
            Op::Write => {
                let bytes = req.sectors * self.disks[disk].params().sector_bytes as u64;
                self.bus.submit(now, bytes, Transfer::WriteData { disk, req, submitted: now });
            }
        }
    }

    /// The earliest time `advance` has something to do.
    pub fn next_event(&self) -> Option<SimTime> {
        let inner = self.disks.iter().filter_map(Disk::next_completion).chain(self.bus.next_completion()).min();
        if self.out.is_empty() {
            inner
        } else {
            Some(self.now)
        }
    }

    /// Run to `now`; returns the commands the host has completed by then, in completion order,
    /// with the disk's index (`Done::done`: a read's data has crossed the bus, a write is
    /// acknowledged by its disk).
    pub fn advance(&mut self, now: SimTime) -> Vec<(usize, Done)> {
        self.run_until(now);
        std::mem::take(&mut self.out)
    }

    /// Process every internal event up to `now` in time order (the bus first, then the disks
    /// by index, among simultaneous ones).
    fn run_until(&mut self, now: SimTime) {
        debug_assert!(now >= self.now, "time runs forward");
        self.now = now;
        loop {
            let bus_t = self.bus.next_completion().filter(|&t| t <= now);
            let disk = self.disks.iter().enumerate().filter_map(|(i, d)| d.next_completion().filter(|&t| t <= now).map(|t| (t, i))).min();
            match (bus_t, disk) {
                (Some(tb), d) if d.is_none_or(|(td, _)| tb <= td) => {
                    let Some((t, item)) = self.bus.pop_due(tb) else { unreachable!("a due bus transfer") };
                    match item {
                        Transfer::ReadData { disk, mut done } => {
                            done.done = t;
                            self.out.push((disk, done));
                        }
                        Transfer::WriteData { disk, req, submitted } => {
                            self.submitted[disk].push_back(submitted);
                            self.disks[disk].submit(t, req);
                        }
                    }
                }
                (_, Some((t, i))) => {
                    let Some(mut done) = self.disks[i].pop_due(t) else { unreachable!("a due disk completion") };
                    // Invariant: one entry pushed per request, popped in the disk's FIFO order.
                    done.submitted = self.submitted[i].pop_front().unwrap_or(done.submitted);
                    match done.req.op {
                        Op::Read => {
                            let bytes = done.req.sectors * self.disks[i].params().sector_bytes as u64;
                            self.bus.submit(t, bytes, Transfer::ReadData { disk: i, done });
                        }
                        Op::Write => self.out.push((i, done)),
                    }
                }
                _ => break,
            }
        }
    }
}

#[cfg(test)]
#[path = "bus_tests.rs"]
mod tests;
