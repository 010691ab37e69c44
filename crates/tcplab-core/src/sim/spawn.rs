//! Flows made while the run goes on: a flow source (a workload) says when its next flow
//! arrives and, when it does, makes it — the flow, its wire identity and its applications —
//! which the simulation adds as if it had been declared, and starts at once. A run that stops
//! when the flows are done waits for every flow a source will still make. Once a made flow has
//! finished and both its ends are closed, its connection state is released
//! (`Flow::retire`), so memory follows the flows alive, not the flows ever made.

use super::{Event, Simulation};
use crate::app::{Application, Notice, Socket};
use crate::engine::order::Rank;
use crate::engine::queue::Lane;
use crate::flow::{Flow, FlowEngine, RetiredTcp};
use crate::trace::pcap::WireIdentity;
use crate::units::SimTime;

/// A flow a source made: the flow, its wire identity, and its applications with their
/// sockets, each told `Notice::Start` at once when its flag says so.
#[derive(Debug)]
pub struct MadeFlow {
    /// The flow.
    pub flow: Flow,
    /// Its addresses, ports and ISNs in captures.
    pub wire: WireIdentity,
    /// Its applications: (application, its sockets, started now).
    pub apps: Vec<(Application, Vec<Socket>, bool)>,
}

/// A maker of flows at run time.
pub trait FlowSource: std::fmt::Debug + Send {
    /// How many flows it makes at most.
    fn planned(&self) -> u64;
    /// When its first flow arrives (none: never).
    fn first(&mut self) -> Option<SimTime>;
    /// Make the flow arriving at `now`, which will be flow `id`; and say when the next one
    /// arrives (none: no more).
    fn make(&mut self, now: SimTime, id: u32) -> (MadeFlow, Option<SimTime>);
}

/// The tie-break id of a source's arrivals among simultaneous flow starts: above every flow
/// index (applications start under their first socket's flow, below 2^31).
const SOURCE_ID: u32 = 1 << 31;

/// A source and what it has made.
#[derive(Debug)]
pub(super) struct Source {
    source: Box<dyn FlowSource>,
    made: u64,
    awaited: bool,
}

impl Simulation {
    /// Add a flow source; its flows count for a run that stops when the flows are done unless
    /// they are `background`.
    pub fn add_source(&mut self, mut source: Box<dyn FlowSource>, background: bool) {
        let id = self.sources.len() as u32;
        assert!(id < SOURCE_ID, "too many flow sources");
        let planned = source.planned() as usize;
        let first = source.first();
        if !background {
            self.flows_awaited += planned;
        }
        self.sources.push(Source { source, made: 0, awaited: !background });
        match first {
            Some(t) => self.schedule(Lane::Timer, t, Event::Spawn { source: id }),
            None => self.source_ended(id as usize),
        }
    }

    /// The event key's source id of source `s`.
    pub(super) fn spawn_key(s: u32) -> (Rank, u32) {
        (Rank::Start, SOURCE_ID | s)
    }

    /// Source `s`'s next flow arrives at `now`: add it, start its applications, and schedule
    /// the next arrival.
    pub(super) fn spawn(&mut self, now: SimTime, s: u32) {
        let id = self.flows.len() as u32;
        let (made, next) = self.sources[s as usize].source.make(now, id);
        self.sources[s as usize].made += 1;
        let awaited = self.sources[s as usize].awaited;
        // Counted when the source was added.
        self.flows_awaited -= usize::from(awaited);
        let f = self.add_flow(made.flow, made.wire);
        debug_assert_eq!(f.0, id);
        for (app, sockets, start) in made.apps {
            let a = self.add_app(app, &sockets, None);
            if start {
                self.notify(now, a as usize, Notice::Start, None);
            }
        }
        match next.filter(|&t| self.stop_time.is_none_or(|stop| t <= stop)) {
            Some(t) => self.schedule(Lane::Timer, t, Event::Spawn { source: s }),
            None => self.source_ended(s as usize),
        }
    }

    /// Keep every connection to the end of the run (by default a finished flow made at run
    /// time releases its connections once both ends are closed). Results are the same.
    pub fn keep_connections(&mut self) {
        self.retire = false;
    }

    /// Release flow `f`'s connections if both its ends are closed (it has finished).
    pub(super) fn retire_if_closed(&mut self, f: usize) {
        use crate::tcp::State;
        let flow = &mut self.flows[f];
        let FlowEngine::Tcp(t) = &flow.engine else { return };
        if t.ends.iter().all(|e| matches!(e.state(), State::Closed | State::TimeWait)) {
            let retired = RetiredTcp::of(t, flow.data_sender());
            flow.engine = FlowEngine::Retired(Box::new(retired));
        }
    }

    /// Source `s` makes no more flows: a run that stops when the flows are done no longer
    /// waits for the ones it did not make.
    fn source_ended(&mut self, s: usize) {
        let src = &self.sources[s];
        if src.awaited {
            self.flows_awaited -= (src.source.planned() - src.made) as usize;
            if self.stop_rule == super::StopRule::FlowsDone && self.flows_done == self.flows_awaited && self.flows_awaited > 0 {
                self.finished = true;
                self.stop_reason = super::StopReason::FlowsDone;
            }
        }
    }
}
