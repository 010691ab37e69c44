//! The event path of controller inputs (`cc::input`): `feed_controller` hands an input to the
//! controller at once, or keeps it while fast recovery owns the window and hands it over at
//! the end of the call that ends recovery; each hand-over is checked (an input never grows
//! the window).

use crate::tcp::cc::{CcInput, CongestionControl};
use crate::units::SimTime;

use super::Connection;

impl Connection {
    /// Feed the controller an input from outside the ACK path (`cc::input`: a measurement
    /// stage's available-bandwidth estimate, an agent's hint). Outside fast recovery the
    /// controller takes it at once (`CongestionControl::on_input`); during recovery, whose
    /// window the connection owns, it is kept and handed over at the end of the arriving
    /// segment's or timer's call that ended recovery (after `on_recovery_exit`, or after the
    /// timeout), so the controller applies it to the window it continues from. An input never
    /// grows the window (the invariant checker's rule).
    pub fn feed_controller(&mut self, now: SimTime, input: &CcInput) {
        if self.recovery.is_some() {
            self.pending_inputs.push(*input);
            return;
        }
        self.give_input(now, input);
    }

    /// Hand one input to the controller, checked.
    fn give_input(&mut self, now: SimTime, input: &CcInput) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let (out, before) = {
            let out = super::Output::default();
            let mut before = self.inv_before(&out);
            before.input = true;
            (out, before)
        };
        self.cc.on_input(now, input);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("an input", &before, &out);
    }

    /// Hand the inputs kept during recovery to the controller once recovery is over. Called
    /// after every segment and timer: the test is inline, the hand-over out of line.
    #[inline(always)]
    pub(super) fn flush_inputs(&mut self, now: SimTime) {
        if !self.pending_inputs.is_empty() && self.recovery.is_none() {
            self.hand_over_inputs(now);
        }
    }

    #[cold]
    #[inline(never)]
    fn hand_over_inputs(&mut self, now: SimTime) {
        for input in std::mem::take(&mut self.pending_inputs) {
            self.give_input(now, &input);
        }
    }

    /// Inputs kept until the current fast recovery ends.
    pub fn pending_inputs(&self) -> usize {
        self.pending_inputs.len()
    }
}
