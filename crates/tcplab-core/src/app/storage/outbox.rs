//! The records a storage application owes one socket, in order: a PDU the send buffer cannot
//! take yet waits here, and every later PDU waits behind it (a session's PDUs never reorder).

use std::collections::VecDeque;

use super::iscsi::Action;
use crate::app::{Record, Socket, Sockets};

/// PDUs waiting for room in one socket's send buffer.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    waiting: VecDeque<(u64, Record)>,
}

impl Outbox {
    /// Queue the `Send` actions of `actions` for `s` and write what fits; returns the other
    /// actions, in order, for the caller.
    pub fn send(&mut self, s: Socket, actions: Vec<Action>, io: &mut impl Sockets) -> Vec<Action> {
        let mut rest = Vec::new();
        for a in actions {
            match a {
                Action::Send { bytes, record } => self.waiting.push_back((bytes, record)),
                other => rest.push(other),
            }
        }
        self.flush(s, io);
        rest
    }

    /// Write waiting records to `s`, oldest first, while the send buffer takes them whole.
    pub fn flush(&mut self, s: Socket, io: &mut impl Sockets) {
        while let Some(&(bytes, record)) = self.waiting.front() {
            if !io.write_record(s, bytes, record) {
                break;
            }
            self.waiting.pop_front();
        }
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::fake::{Did, FakeSockets};

    #[test]
    fn records_wait_in_order_for_room_and_never_jump_the_queue() {
        let s = Socket::new(0, 0);
        let mut io = FakeSockets { space: 100, ..Default::default() };
        let mut o = Outbox::default();
        let r = |tag| Action::Send { bytes: 60, record: Record { kind: 1, tag, arg: 0 } };
        let rest = o.send(s, vec![r(1), Action::Complete { tag: 9, bytes: 5 }, r(2)], &mut io);
        assert_eq!(rest, vec![Action::Complete { tag: 9, bytes: 5 }]);
        // 60 fits, the second 60 does not; a later small record must still wait behind it.
        o.send(s, vec![Action::Send { bytes: 10, record: Record { kind: 1, tag: 3, arg: 0 } }], &mut io);
        assert_eq!(io.did, vec![Did::WriteRecord(s, 60, Record { kind: 1, tag: 1, arg: 0 })]);
        io.space = 1000;
        o.flush(s, &mut io);
        assert!(o.is_empty());
        let tags: Vec<u32> = io.did.iter().filter_map(|d| if let Did::WriteRecord(_, _, r) = d { Some(r.tag) } else { None }).collect();
        assert_eq!(tags, vec![1, 2, 3]);
    }
}
