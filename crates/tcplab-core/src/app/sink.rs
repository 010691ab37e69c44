//! The receiving end of a bulk transfer: the connection reads everything as it arrives (as
//! iperf's server does); once the peer has closed, it closes too and the transfer is complete.

use super::{Milestone, Notice, Socket, Sockets};

/// A sink on one socket.
#[derive(Clone, Debug)]
pub struct Sink {
    /// The socket it reads (the destination end of a TCP flow).
    pub socket: Socket,
    closed: bool,
}

impl Sink {
    /// A sink on `socket`.
    pub fn new(socket: Socket) -> Self {
        Sink { socket, closed: false }
    }

    /// Handle a notice: when its socket's peer has closed, close (once) and finish the flow.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if notice == Notice::Socket(self.socket) && !self.closed && io.peer_closed(self.socket) {
            self.closed = true;
            io.close(self.socket);
            io.finish_flow(self.socket);
            io.milestone(self.socket, Milestone::Received, io.received(self.socket));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{Did, FakeSockets};
    use super::super::Milestone;
    use super::*;

    #[test]
    fn closes_once_after_the_peer_and_finishes_the_flow() {
        let s = Socket::new(3, 1);
        let mut sink = Sink::new(s);
        let mut io = FakeSockets::default();
        sink.on(Notice::Socket(s), &mut io);
        assert!(io.did.is_empty(), "the peer is still open");
        io.peer_closed = true;
        sink.on(Notice::Socket(Socket::new(4, 1)), &mut io);
        assert!(io.did.is_empty(), "another socket's notice");
        sink.on(Notice::Socket(s), &mut io);
        sink.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did, vec![Did::Close(s), Did::Finish(s), Did::Milestone(s, Milestone::Received, 0)]);
    }
}
