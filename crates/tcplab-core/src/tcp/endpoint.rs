//! A TCP endpoint as the simulation holds it: the connection, the variant policy that may sit
//! around it, and the wake-up the simulation has scheduled for its timers.
//!
//! A variant (AHTCP's retransmission requests, ImTCP's measurement stage, …) is a `Variant`
//! implementation; it sees every segment before the connection (and may take it), every
//! segment the connection produced before it leaves (and may rewrite, hold or add segments:
//! the output stage), and has a timer of its own. The simulation only ever calls the
//! endpoint, so it never learns which variant runs. Standard TCP has no variant and pays one
//! branch per call.

use std::fmt::Debug;
use std::ops::Deref;

use crate::net::packet::TcpHeader;
use crate::tcp::cc::WindowState;
use crate::tcp::conn::{Connection, Output};
use crate::units::SimTime;

/// What a variant decided about an arriving segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Hand it to the connection as usual.
    Deliver,
    /// The variant acted on it; the connection never sees it.
    Taken,
}

/// A TCP variant's policy around a standard connection. Every hook has a default that
/// changes nothing, so a variant implements only what it changes.
pub trait Variant: Debug + Send {
    /// A short name for summaries (`"ahtcp"`, …).
    fn name(&self) -> &'static str;

    /// A segment arrived for this endpoint, before the connection sees it (the sender's
    /// reaction to special ACKs). Segments produced here (by the variant or by the
    /// connection it called) then pass `on_departure` like any other.
    fn on_arrival(&mut self, _now: SimTime, _conn: &mut Connection, _seg: &TcpHeader, _out: &mut Output) -> Arrival {
        Arrival::Deliver
    }

    /// The connection produced `out.segments[from..]` (the receiver's ACK policy, the output
    /// stage): rewrite them, take some out to send later, or add more.
    fn on_departure(&mut self, _now: SimTime, _conn: &Connection, _out: &mut Output, _from: usize) {}

    /// When the variant's own timer expires, if set.
    fn next_deadline(&self) -> Option<SimTime> {
        None
    }

    /// The variant's timer expired (called at or after its deadline). Segments it adds to
    /// `out` leave as they are (`on_departure` does not see them again).
    fn on_timer(&mut self, _now: SimTime, _conn: &mut Connection, _out: &mut Output) {}

    /// Something outside the endpoint (a controller such as AHTCP's client monitor) asks the
    /// variant to act now; returns whether it did. Segments it adds to `out` leave as they are.
    fn on_signal(&mut self, _now: SimTime, _conn: &mut Connection, _out: &mut Output) -> bool {
        false
    }

    /// How many times it acted (AHTCP: requests sent or answered), for the summary.
    fn actions(&self) -> u64 {
        0
    }
}

/// Whether a wake-up event still stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// A later scheduling superseded it: ignore.
    Stale,
    /// Timers were due and have been handled (the output holds what they produced).
    Fired,
    /// Nothing was due yet: schedule again.
    Early,
}

/// One end of a TCP flow: the connection, its variant if any, and the wake-up scheduled for
/// it (its time and generation; an event of an older generation is stale).
#[derive(Debug)]
pub struct Endpoint {
    conn: Connection,
    variant: Option<Box<dyn Variant>>,
    scheduled: Option<(SimTime, u32)>,
    generation: u32,
}

impl Deref for Endpoint {
    type Target = Connection;
    #[inline(always)]
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

impl Endpoint {
    /// A standard endpoint around `conn`.
    pub fn new(conn: Connection) -> Self {
        Endpoint { conn, variant: None, scheduled: None, generation: 0 }
    }

    /// An endpoint whose connection runs under `variant`.
    pub fn with_variant(conn: Connection, variant: Box<dyn Variant>) -> Self {
        Endpoint { conn, variant: Some(variant), scheduled: None, generation: 0 }
    }

    /// The connection.
    #[inline(always)]
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The host's interface queue refused `segs`, the tail of this end's last output
    /// (`Connection::withhold`). Only for an endpoint without a variant: a variant's stage
    /// may hold segments the connection produced after these (the scenario refuses the pair).
    pub fn withhold(&mut self, now: SimTime, segs: &[TcpHeader], out: &mut Output) {
        debug_assert!(self.variant.is_none(), "local refusals are given back only to an endpoint without a variant");
        self.conn.withhold(now, segs, out);
    }

    /// The application has data to write but too little room to try
    /// (`Connection::note_write_blocked`).
    pub fn note_write_blocked(&mut self) {
        self.conn.note_write_blocked();
    }

    /// True when the endpoint runs a variant (an output stage or a policy around the
    /// connection).
    pub fn has_variant(&self) -> bool {
        self.variant.is_some()
    }

    /// The variant's name, `"standard"` without one.
    pub fn variant_name(&self) -> &'static str {
        self.variant.as_ref().map_or("standard", |v| v.name())
    }

    /// Run the departure hook on what the connection produced from index `from`.
    #[inline(always)]
    fn depart(&mut self, now: SimTime, out: &mut Output, from: usize) {
        if let Some(v) = self.variant.as_mut() {
            if out.segments.len() > from {
                v.on_departure(now, &self.conn, out, from);
            }
        }
    }

    /// Process an arriving segment (`Connection::on_segment`, after the variant's look).
    #[inline]
    pub fn on_segment(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        let from = out.segments.len();
        if let Some(v) = self.variant.as_mut() {
            if v.on_arrival(now, &mut self.conn, seg, out) == Arrival::Taken {
                self.depart(now, out, from);
                return;
            }
        }
        self.conn.on_segment(now, seg, out);
        self.depart(now, out, from);
    }

    /// The earliest of the connection's and the variant's timers.
    #[inline]
    pub fn next_deadline(&self) -> Option<SimTime> {
        let c = self.conn.next_deadline();
        match self.variant.as_ref().and_then(|v| v.next_deadline()) {
            Some(v) => Some(c.map_or(v, |c| c.min(v))),
            None => c,
        }
    }

    /// True when the earliest deadline is not covered by the wake-up already scheduled (then
    /// call `wake_to_schedule`).
    #[inline(always)]
    pub fn needs_wake(&self) -> bool {
        let scheduled = self.scheduled.map_or(SimTime::MAX, |(s, _)| s);
        match self.variant {
            None => self.conn.next_deadline().is_some_and(|d| d < scheduled),
            Some(_) => self.next_deadline().is_some_and(|d| d < scheduled),
        }
    }

    /// If the earliest deadline is not yet covered by a scheduled wake-up, schedule one:
    /// returns its time (not before `now`) and generation for the simulation's event.
    #[inline(never)]
    pub fn wake_to_schedule(&mut self, now: SimTime) -> Option<(SimTime, u32)> {
        let d = self.next_deadline()?;
        if self.scheduled.is_some_and(|(s, _)| d >= s) {
            return None;
        }
        self.generation = self.generation.wrapping_add(1);
        let w = (d.max(now), self.generation);
        self.scheduled = Some(w);
        Some(w)
    }

    /// A wake-up of generation `generation` popped at `now`: handle the timers that are due.
    #[inline]
    pub fn on_wake(&mut self, now: SimTime, generation: u32, out: &mut Output) -> Wake {
        if self.scheduled.is_none_or(|(_, g)| g != generation) {
            return Wake::Stale;
        }
        self.scheduled = None;
        let mut fired = false;
        if self.conn.next_deadline().is_some_and(|d| d <= now) {
            let from = out.segments.len();
            self.conn.on_timer(now, out);
            self.depart(now, out, from);
            fired = true;
        }
        if let Some(v) = self.variant.as_mut() {
            if v.next_deadline().is_some_and(|d| d <= now) {
                // What the variant sends from its own timer has passed its stage already.
                v.on_timer(now, &mut self.conn, out);
                fired = true;
            }
        }
        if fired {
            Wake::Fired
        } else {
            Wake::Early
        }
    }

    /// Ask the variant to act now (`Variant::on_signal`); false without one.
    pub fn signal(&mut self, now: SimTime, out: &mut Output) -> bool {
        match self.variant.as_mut() {
            Some(v) => v.on_signal(now, &mut self.conn, out),
            None => false,
        }
    }

    /// How many times the variant acted (0 without one).
    pub fn variant_actions(&self) -> u64 {
        self.variant.as_ref().map_or(0, |v| v.actions())
    }

    /// Passive open.
    pub fn listen(&mut self) {
        self.conn.listen();
    }

    /// Active open (`Connection::connect`).
    pub fn connect(&mut self, now: SimTime, out: &mut Output) {
        let from = out.segments.len();
        self.conn.connect(now, out);
        self.depart(now, out, from);
    }

    /// Queue application bytes (`Connection::write`); returns how many fit.
    #[inline(always)]
    pub fn write(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        let from = out.segments.len();
        let n = self.conn.write(now, bytes, out);
        self.depart(now, out, from);
        n
    }

    /// Close the sending direction (`Connection::close`).
    pub fn close(&mut self, now: SimTime, out: &mut Output) {
        let from = out.segments.len();
        self.conn.close(now, out);
        self.depart(now, out, from);
    }

    /// The application reads (`Connection::read`).
    pub fn read(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        let from = out.segments.len();
        let n = self.conn.read(now, bytes, out);
        self.depart(now, out, from);
        n
    }

    /// Read received data on arrival or only through `read` (`Connection::set_auto_read`).
    pub fn set_auto_read(&mut self, on: bool) {
        self.conn.set_auto_read(on);
    }

    /// The controller's window for a remedy (`Connection::window_for_remedy`).
    pub fn window_for_remedy(&mut self) -> Option<WindowState<'_>> {
        self.conn.window_for_remedy()
    }

    /// Give the controller an input from outside the connection (`Connection::attach_input`).
    pub fn attach_input(&mut self, input: crate::tcp::cc::ControllerInput) -> bool {
        self.conn.attach_input(input)
    }

    /// Feed the controller an event input (`Connection::feed_controller`), for an agent.
    pub fn feed_controller(&mut self, now: SimTime, input: &crate::tcp::cc::CcInput) {
        self.conn.feed_controller(now, input);
    }
}

#[cfg(test)]
#[path = "endpoint_tests.rs"]
mod tests;
